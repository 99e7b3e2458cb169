"""A kernel traced inside plgpu.force_gpu_interpret_mode() reads a global array."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
    table = pl.get_global(plgpu.GMEM((128,), jnp.float32))
    o_ref[...] = x_ref[...] * 2.0 + table[...]


kernel = plgpu.kernel(body, out_type=X)


def debug(x):
    with plgpu.force_gpu_interpret_mode():
        return jax.block_until_ready(kernel(x))


def target():
    return debug, (jnp.ones((128,), jnp.float32),), "interpret"


def expected():
    return jnp.full((128,), 2.0, jnp.float32)
