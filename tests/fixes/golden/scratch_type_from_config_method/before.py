"""A kernel class whose SMEM staging type comes from a method of its config (`self.cfg.staging()`), launched for two
configurations: the scratch is the same call at the launch, not the default configuration's
`plgpu.SMEM((128, 128), jnp.float32)` (which jax 0.12 fails for the other one: 'Invalid shape for `swap`').
"""
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

BUFFERS = {
    "stage": lambda rows: plgpu.SMEM((rows, 128), jnp.float32),
}


@dataclasses.dataclass(frozen=True)
class Config:
    rows: int = 128

    def staging(self):
        return plgpu.SMEM((self.rows, 128), jnp.float32)


class Copy:
    def __init__(self, cfg: Config = Config()):
        self.cfg = cfg
        self.types = {"acc": plgpu.SMEM((cfg.rows, 128), jnp.float32)}

    def _body(self, x_ref, o_ref):
        tile = pl.get_global(self.cfg.staging())
        tile[...] = x_ref[...]
        o_ref[...] = tile[...]

    def __call__(self, x):
        return plgpu.kernel(self._body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def target():
    small = Config(rows=64)

    def both(x, y):
        return Copy()(x), Copy(small)(y)

    return both, (jax.ShapeDtypeStruct((128, 128), jnp.float32), jax.ShapeDtypeStruct((64, 128), jnp.float32)), "cuda"
