"""A 2-D grid; in_specs is a variable; the pallas_call is built and returned by a helper."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((16, 256), jnp.float32)
SPECS = [pl.BlockSpec((8, 128), lambda i, j: (i, j))]


def scale_kernel(scales_ref, x_ref, o_ref):
  o_ref[...] = x_ref[...] * scales_ref[...]


def build():
  return functools.partial(pl.pallas_call(scale_kernel, out_shape=X, grid=(2, 2), in_specs=[pl.BlockSpec((8, 128), lambda i, j: (0, 0), memory_space=plgpu.GMEM), *SPECS],
                        out_specs=pl.BlockSpec((8, 128), lambda i, j: (i, j))),
                        jnp.zeros((8, 128), jnp.float32))


def target():
  return build(), (X,), "triton"
