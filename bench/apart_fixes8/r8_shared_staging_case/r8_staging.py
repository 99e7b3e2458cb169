"""Staging-buffer helpers of the activation kernels.

Written for the Mosaic GPU kernels, where every activation stages its f32
upcast in shared memory before the epilogue.
"""

import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

STAGING_DTYPE = jnp.float32


def staging(shape):
  """The f32 staging buffer of one tile."""
  return plgpu.SMEM(tuple(shape), STAGING_DTYPE)


def staging_bytes(shape) -> int:
  n = 1
  for d in shape:
    n *= d
  return n * jnp.dtype(STAGING_DTYPE).itemsize
