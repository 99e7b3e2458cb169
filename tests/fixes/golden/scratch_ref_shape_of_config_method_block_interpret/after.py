"""An interpreted kernel whose config builds its block shape with a method (`cfg.tile(width=hidden)`) and whose
staging buffer has the input block's whole shape (`x_ref.shape`): as scratch its shape is that same call."""
import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class ScaleConfig:
    rows: int = 8
    factor: float = 3.0

    def tile(self, width):
        return (self.rows, width)


def scale_kernel(x_ref, o_ref, staged, *, cfg: ScaleConfig):
    staged[...] = x_ref[...].astype(jnp.float32) * cfg.factor
    o_ref[...] = staged[...].astype(o_ref.dtype)


def scale(x, cfg=ScaleConfig()):
    rows, hidden = x.shape
    spec = pl.BlockSpec(cfg.tile(width=hidden), lambda i: (i, 0))
    return pl.pallas_call(
        functools.partial(scale_kernel, cfg=cfg),
        grid=(rows // cfg.rows,),
        in_specs=[spec],
        out_specs=spec,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        interpret=True,
        scratch_shapes=[pltpu.VMEM(cfg.tile(width=hidden), jnp.float32)],
    )(x)


def target():
    return scale, (jnp.arange(16 * 128, dtype=jnp.float32).reshape(16, 128),), "interpret"


def expected():
    return np.arange(16 * 128, dtype=np.float32).reshape(16, 128) * 3.0
