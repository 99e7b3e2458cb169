"""A kernel class whose SMEM tile type is a property of its config dataclass (`self.cfg.tile`), launched for two
configurations: the scratch is `self.cfg.tile` at the launch, the same expression, which holds for both.

(A fix once spelled the type from the value the analysis saw, `plgpu.SMEM((128, 128), jnp.bfloat16)`: jax 0.12
then fails the other configuration, 'Invalid shape for `swap`. Ref shape: (128, 128). ... Value shape: (64, 128)'.)
"""
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class TileConfig:
    block_m: int = 128
    block_n: int = 128
    dtype: object = jnp.bfloat16

    @property
    def tile(self):
        return plgpu.SMEM((self.block_m, self.block_n), self.dtype)


class Scale:
    def __init__(self, cfg: TileConfig = TileConfig()):
        self.cfg = cfg

    def _body(self, x_ref, o_ref):
        tile = pl.get_global(self.cfg.tile)
        tile[...] = x_ref[...] * 2
        o_ref[...] = tile[...]

    def __call__(self, x):
        return plgpu.kernel(self._body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def target():
    small = TileConfig(block_m=64, dtype=jnp.float32)

    def both(x, y):
        return Scale()(x), Scale(small)(y)

    return both, (jax.ShapeDtypeStruct((128, 128), jnp.bfloat16), jax.ShapeDtypeStruct((64, 128), jnp.float32)), "cuda"
