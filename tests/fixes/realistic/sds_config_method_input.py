"""An interpreted lookup whose table shape comes from a config method returning a ShapeDtypeStruct."""
# fix-rate: kind=input meaning=preserving
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


@dataclasses.dataclass(frozen=True)
class LookupConfig:
    rows: int = 8
    width: int = 128

    def table(self):
        return jax.ShapeDtypeStruct((self.rows, self.width), jnp.int32)


def lookup(x, cfg: LookupConfig = LookupConfig()):
    def kernel(x_ref, o_ref):
        table = pl.get_global(cfg.table())
        o_ref[...] = x_ref[...] + table[...]

    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(x.shape[0] // cfg.rows,),
        in_specs=[pl.BlockSpec((cfg.rows, cfg.width), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((cfg.rows, cfg.width), lambda i: (i, 0)),
        interpret=True,
    )(x)


def target():
    return lookup, (jnp.full((16, 128), 5, jnp.int32),), "interpret"


def expected():
    return jnp.full((16, 128), 5, jnp.int32)
