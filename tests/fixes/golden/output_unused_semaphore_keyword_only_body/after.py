"""A plgpu.kernel body with a keyword-only parameter its functools.partial binds: the unused semaphore
output and its (positional) parameter are dropped; the keyword-only one stays as it was."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, *, scale):
  o_ref[...] = x_ref[...] * scale


def target():
  kernel = plgpu.kernel(functools.partial(body, scale=2.0), out_type=(X,))
  return kernel, (X,), "cuda"
