"""The layer holds functools.partial(plgpu.SMEM, dtype=...) for its config; the tile is made from it."""
# fix-rate: kind=scratch meaning=preserving
import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class LayerConfig:
    rows: int = 128
    cols: int = 128
    dtype: object = jnp.bfloat16


class Layer:
    def __init__(self, cfg: LayerConfig = LayerConfig()):
        self.cfg = cfg
        self.smem = functools.partial(plgpu.SMEM, dtype=cfg.dtype)

    def _kernel(self, x_ref, o_ref):
        tile = pl.get_global(self.smem((self.cfg.rows, self.cfg.cols)))
        tile[...] = x_ref[...]
        o_ref[...] = tile[...] * 2

    def __call__(self, x):
        return plgpu.kernel(self._kernel, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def target():
    other = LayerConfig(rows=64, dtype=jnp.float32)

    def both(x, y):
        return Layer()(x), Layer(other)(y)

    return both, (jax.ShapeDtypeStruct((128, 128), jnp.bfloat16), jax.ShapeDtypeStruct((64, 128), jnp.float32)), "cuda"
