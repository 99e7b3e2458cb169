"""A kernel class whose buffer type comes from a module-level registry of type builders
(`BUFFERS["stage"](self.cfg.rows)`), launched for two configurations: the registry call moves to the launch as
written, `self` being the launch's instance too.
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
        stage = pl.get_global(BUFFERS["stage"](self.cfg.rows))
        stage[...] = x_ref[...]
        o_ref[...] = stage[...]

    def __call__(self, x):
        return plgpu.kernel(self._body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def target():
    small = Config(rows=64)

    def both(x, y):
        return Copy()(x), Copy(small)(y)

    return both, (jax.ShapeDtypeStruct((128, 128), jnp.float32), jax.ShapeDtypeStruct((64, 128), jnp.float32)), "cuda"
