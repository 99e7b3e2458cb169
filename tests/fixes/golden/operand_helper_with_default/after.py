"""A helper with a defaulted parameter asks for the buffer: the new parameter goes before it."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def add_offsets(x_ref, o_ref, offsets, scale=1.0):
  o_ref[...] = x_ref[...] + scale * offsets[...]


def body(offsets, x_ref, o_ref):
  add_offsets(x_ref, o_ref, offsets, scale=2.0)


def target():
  kernel = functools.partial(
    plgpu.kernel(body, out_type=X), jnp.zeros((128,), jnp.float32)
  )
  return kernel, (X,), "cuda"
