"""On-chip buffer types for the normalisation kernels, shared by every backend's launcher.

The TPU and Mosaic GPU launchers of ``r9_ln_kernel`` both ask this module for their f32
staging buffers so that the budget checks live in one place.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

MAX_STAGING_BYTES = 4 * 1024 * 1024


def staging_buffer(block_rows: int, hidden: int):
  """The f32 buffer a block of rows is normalised in."""
  nbytes = block_rows * hidden * 4
  if nbytes > MAX_STAGING_BYTES:
    raise ValueError(f"staging buffer of {nbytes} bytes exceeds {MAX_STAGING_BYTES}")
  return plgpu.SMEM((block_rows, hidden), jnp.float32)


def stats_buffer(block_rows: int):
  """Per-row statistics (mean, rstd) kept beside the staging buffer."""
  return plgpu.SMEM((block_rows, 128), jnp.float32)
