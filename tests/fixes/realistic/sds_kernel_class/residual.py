"""A kernel class that fetches its residual buffer from a ShapeDtypeStruct of shapes.py with get_global."""
# fix-rate: kind=operand meaning=preserving
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

import shapes


class AddResidual:
    def _body(self, x_ref, o_ref):
        residual = pl.get_global(shapes.RESIDUAL)
        o_ref[...] = x_ref[...] + residual[...]

    def __call__(self, x):
        return plgpu.kernel(self._body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def target():
    return AddResidual(), (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
