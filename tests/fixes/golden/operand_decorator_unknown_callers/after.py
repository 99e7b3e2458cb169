"""A @plgpu.kernel body handed on as a value, so its callers are not known: the kernel is renamed and
add_weights becomes a function passing the new operand first, so every caller keeps calling it."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((256,), jnp.float16)


@functools.partial(plgpu.kernel, out_type=X, grid=(2,), grid_names=("x",))
def add_weights_kernel(weights_ref, x_ref, o_ref):
  o_ref[...] = x_ref[...] + weights_ref[...]


def add_weights(*operands):
  return add_weights_kernel(jnp.zeros((256,), jnp.float16), *operands)


KERNELS = {"add": add_weights}


def target():
  return jax.jit(KERNELS["add"]), (X,), "cuda"
