"""Pallas TPU kernel: per-row mean and mean-square over column blocks (LayerNorm statistics)."""

from __future__ import annotations

import jax.numpy as jnp
from jax.experimental import pallas as pl


def rowstats_kernel(x_ref, mean_ref, msq_ref, run_sum, run_sq, *, block_rows: int, block_cols: int, width: int):
  j = pl.program_id(1)

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
