"""The scratch type is a class attribute; the body is a method launched from another method."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


class Stager:
    TILE = plgpu.SMEM((128,), jnp.float32)

    def body(self, x_ref, o_ref, tile):
        tile[...] = x_ref[...] + 1.0
        o_ref[...] = tile[...]

    def __call__(self, x):
        return plgpu.kernel(self.body, out_type=X, scratch_types=[self.TILE])(x)


def target():
    return Stager(), (X,), "cuda"
