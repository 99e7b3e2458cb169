"""A nested function of the body asks get_global for an SMEM staging tile."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, tile_ref):
    def stage():
        tile_ref[...] = x_ref[...] * 2.0
        return tile_ref[...]

    o_ref[...] = stage()


def target():
    return plgpu.kernel(
        body, out_type=X, scratch_types=[plgpu.SMEM((128,), jnp.float32)]
    ), (X,), "cuda"
