"""Pallas TPU kernel: per-row mean and mean-square over column blocks (LayerNorm statistics)."""

from __future__ import annotations

import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def rowstats_kernel(x_ref, mean_ref, msq_ref, *, block_rows: int, block_cols: int, width: int):
  j = pl.program_id(1)
  run_sum = pl.get_global(pltpu.VMEM((block_rows, block_cols), jnp.float32))
  run_sq = pl.get_global(pltpu.VMEM((block_rows, block_cols), jnp.float32))

  @pl.when(j == 0)
  def _init():
    run_sum[...] = jnp.zeros_like(run_sum)
    run_sq[...] = jnp.zeros_like(run_sq)

  x = x_ref[...].astype(jnp.float32)
  run_sum[...] += x
  run_sq[...] += x * x

  @pl.when(j == pl.num_programs(1) - 1)
  def _finish():
    mean = jnp.sum(run_sum[...], axis=1, keepdims=True) / width
    msq = jnp.sum(run_sq[...], axis=1, keepdims=True) / width
    mean_ref[...] = jnp.broadcast_to(mean, mean_ref.shape)
    msq_ref[...] = jnp.broadcast_to(msq, msq_ref.shape)
