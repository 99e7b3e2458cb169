"""No jax.numpy import, `from functools import partial`, mosaic_gpu under another alias."""
from functools import partial

import jax.numpy as jnp
from jax import ShapeDtypeStruct
from jax.experimental.pallas import mosaic_gpu as gpu

OUT = ShapeDtypeStruct((8, 128), "bfloat16")


def body(weights_ref, x_ref, o_ref):
  o_ref[...] = x_ref[...] * weights_ref[...]


def target():
  return partial(
    gpu.kernel(body, out_type=OUT), jnp.zeros((8, 128), jnp.bfloat16)
  ), (OUT,), "cuda"
