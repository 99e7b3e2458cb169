"""get_global asked for a jax.ShapeDtypeStruct in a Triton pallas_call."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
    scale = pl.get_global(jax.ShapeDtypeStruct((128,), jnp.float32))
    o_ref[...] = x_ref[...] * scale[...]


def target():
    return pl.pallas_call(body, out_shape=X), (X,), "triton"
