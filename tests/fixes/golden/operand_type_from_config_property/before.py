"""A kernel class whose residual buffer type is a property of its config (`self.cfg.residual`), launched for two
configurations: the new operand is `jnp.zeros(self.cfg.residual.shape, self.cfg.residual.dtype)` at the launch.

(A fix once passed `jnp.zeros((128, 128), jnp.float32)`, the default configuration's: jax 0.12 fails the other,
'add got incompatible shapes for broadcasting: (64, 128), (128, 128)'.)
"""
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class Config:
    rows: int = 128

    @property
    def residual(self):
        return plgpu.GMEM((self.rows, 128), jnp.float32)


class Add:
    def __init__(self, cfg: Config = Config()):
        self.cfg = cfg

    def _body(self, x_ref, o_ref):
        res = pl.get_global(self.cfg.residual)
        o_ref[...] = x_ref[...] + res[...]

    def __call__(self, x):
        return plgpu.kernel(self._body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def target():
    small = Config(rows=64)

    def both(x, y):
        return Add()(x), Add(small)(y)

    return both, (jax.ShapeDtypeStruct((128, 128), jnp.float32), jax.ShapeDtypeStruct((64, 128), jnp.float32)), "cuda"
