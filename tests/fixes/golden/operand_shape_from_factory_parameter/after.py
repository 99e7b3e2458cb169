"""A factory builds the kernel for a size `n` and its body asks get_global for a table of `n` values: the shape is
not known statically, but the launch, in the same factory, sees `n`, so the operand is `jnp.zeros((n,), ...)`.
(Before, no fix: "the buffer's shape or dtype is not known before the kernel runs".)
"""
import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def make(n):
  def body(lut_ref, x_ref, o_ref):
    o_ref[...] = x_ref[...] + lut_ref[...]
  return functools.partial(
    plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((n,), jnp.float32)),
    jnp.zeros((n,), jnp.float32),
  )


def target():
  return make(256), (jax.ShapeDtypeStruct((256,), jnp.float32),), "cuda"
