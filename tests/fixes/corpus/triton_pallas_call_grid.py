"""A Triton pallas_call with a grid reads a global array through get_global."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
    bias = pl.get_global(plgpu.GMEM((128,), jnp.float32))
    o_ref[...] = x_ref[...] + bias[...]


def run(x):
    return pl.pallas_call(body, out_shape=X, grid=(1,), in_specs=[pl.BlockSpec((128,), lambda i: (0,))],
                          out_specs=pl.BlockSpec((128,), lambda i: (0,)))(x)


def target():
    return run, (X,), "triton"
