"""A get_global written as a lambda with a defaulted parameter, called once with none."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(offsets_ref, x_ref, o_ref):
  # the whole table
  o_ref[...] = x_ref[...] + offsets_ref[...]


def target():
  kernel = functools.partial(
    plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",)),
    jnp.zeros((128,), jnp.float32),
  )
  return kernel, (X,), "cuda"
