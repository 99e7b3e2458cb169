"""The buffer type is a module constant shared by several kernels."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


LUT_TYPE = plgpu.GMEM((128,), jnp.float32)


def body(x_ref, o_ref):
    lut = pl.get_global(LUT_TYPE)
    o_ref[...] = x_ref[...] + lut[...]


def target():
    return plgpu.kernel(body, out_type=X), (X,), "cuda"
