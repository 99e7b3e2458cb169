"""Front end of the row-statistics op: tuning table, config and the jitted launch."""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from r14_rowstats_kernel import rowstats_kernel

LANES = 128


@dataclasses.dataclass(frozen=True)
class RowStatsConfig:
  block_rows: int = 8
  block_cols: int = 256


# (rows, cols) -> config, from sweeps on v5e.
_TUNED = {
    (64, 1024): RowStatsConfig(block_rows=16, block_cols=512),
    (256, 4096): RowStatsConfig(block_rows=32, block_cols=1024),
}


def get_default_config(rows: int, cols: int) -> RowStatsConfig:
  return _TUNED.get((rows, cols), RowStatsConfig())


@functools.partial(jax.jit, static_argnames=("config",))
def row_stats(x: jax.Array, config: RowStatsConfig | None = None):
  rows, cols = x.shape
  cfg = config or get_default_config(rows, cols)
  kernel = functools.partial(
      rowstats_kernel, block_rows=cfg.block_rows, block_cols=cfg.block_cols, width=cols)
  out_block = pl.BlockSpec((cfg.block_rows, LANES), lambda i, j: (i, 0))
  mean, msq = pl.pallas_call(
      kernel,
      out_shape=[jax.ShapeDtypeStruct((rows, LANES), jnp.float32)] * 2,
      grid=(rows // cfg.block_rows, cols // cfg.block_cols),
      in_specs=[pl.BlockSpec((cfg.block_rows, cfg.block_cols), lambda i, j: (i, j))],
      out_specs=[out_block, out_block],
      compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
  )(x)
  return mean[:, 0], msq[:, 0] - mean[:, 0] ** 2
