"""Buffers shared by the RMSNorm kernels of this package: one place to change their layout."""

from __future__ import annotations

import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

SUMSQ_LANES = 128


def sumsq_buffer(block_rows: int):
  """The running sum of squares of one row block, across the feature steps."""
  return pl.get_global(pltpu.VMEM((block_rows, SUMSQ_LANES), jnp.float32))
