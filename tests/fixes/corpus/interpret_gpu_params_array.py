"""A global array in a plgpu.kernel run under plgpu.InterpretGPUParams."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
    lut = pl.get_global(plgpu.GMEM((128,), jnp.float32))
    o_ref[...] = x_ref[...] + lut[...] + 1.0


def target():
    fn = plgpu.kernel(body, out_type=X, interpret=plgpu.InterpretGPUParams())
    return fn, (jnp.zeros((128,), jnp.float32),), "interpret"


def expected():
    return jnp.ones((128,), jnp.float32)
