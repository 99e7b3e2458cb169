"""A kernel class that keeps its buffer types in a dict on self, filled in __init__ from its arguments."""
# fix-rate: kind=scratch meaning=preserving
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


class RowSoftmax:
    def __init__(self, width=128, dtype=jnp.float32):
        self.width = width
        self.dtype = dtype
        self.buffers = {"row": plgpu.SMEM((width,), dtype)}

    def _kernel(self, x_ref, o_ref):
        row = pl.get_global(self.buffers["row"])
        row[...] = jnp.exp(x_ref[...])
        o_ref[...] = row[...] / jnp.sum(row[...])

    def __call__(self, x):
        return plgpu.kernel(self._kernel, out_type=jax.ShapeDtypeStruct((self.width,), self.dtype))(x)


def target():
    def both(x, y):
        return RowSoftmax()(x), RowSoftmax(256)(y)

    return both, (jax.ShapeDtypeStruct((128,), jnp.float32), jax.ShapeDtypeStruct((256,), jnp.float32)), "cuda"
