"""TPU kernel: per-row mean of squares over a hidden dimension split into column blocks.

Grid `(row_blocks, col_blocks)`; the column axis is the reduction axis (`arbitrary`). The partial sums
of squares are kept in f32 across the column blocks of one row block.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

LANES = 128


@dataclasses.dataclass(frozen=True)
class RmsConfig:
  block_rows: int
  block_cols: int
  hidden: int

  @property
  def num_col_blocks(self) -> int:
    return self.hidden // self.block_cols


def mean_square_kernel(x_ref, o_ref, *, cfg: RmsConfig):
  c = pl.program_id(1)
  sumsq = pl.get_global(pltpu.VMEM((cfg.block_rows, LANES), jnp.float32))

  @pl.when(c == 0)
  def _zero():
    sumsq[...] = jnp.zeros_like(sumsq)

  x = x_ref[...].astype(jnp.float32)
  part = jnp.sum(x * x, axis=1, keepdims=True)
  sumsq[...] += jnp.broadcast_to(part, sumsq.shape)

  @pl.when(c == cfg.num_col_blocks - 1)
  def _finish():
    o_ref[...] = sumsq[...] / cfg.hidden


def grid_and_specs(cfg: RmsConfig, rows: int):
  grid = (rows // cfg.block_rows, cfg.num_col_blocks)
  in_specs = [pl.BlockSpec((cfg.block_rows, cfg.block_cols), lambda r, c: (r, c))]
  out_specs = pl.BlockSpec((cfg.block_rows, LANES), lambda r, c: (r, 0))
  return grid, in_specs, out_specs
