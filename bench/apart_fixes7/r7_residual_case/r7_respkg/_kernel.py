"""`y = x + residual_scale * branch`, one block of rows per CTA, both operands loaded by TMA."""

from __future__ import annotations

import functools

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

from ._config import ResidualConfig


def _body(x_gmem, branch_gmem, o_gmem, x_tile, branch_tile, *, cfg: ResidualConfig):
  rows = pl.ds(pl.program_id(0) * cfg.block_rows, cfg.block_rows)
  x_barrier, branch_barrier = (pl.get_global(t) for t in cfg.barrier_types)
  plgpu.copy_gmem_to_smem(x_gmem.at[rows], x_tile, x_barrier)
  plgpu.copy_gmem_to_smem(branch_gmem.at[rows], branch_tile, branch_barrier)
  plgpu.barrier_wait(x_barrier)
  plgpu.barrier_wait(branch_barrier)
  x_tile[...] = x_tile[...] + branch_tile[...] * cfg.residual_scale
  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(x_tile, o_gmem.at[rows])
  plgpu.wait_smem_to_gmem(0)


def scaled_residual_add(x: jax.Array, branch: jax.Array, cfg: ResidualConfig) -> jax.Array:
  if x.shape != branch.shape or x.shape[1] != cfg.hidden:
    raise ValueError(f"shapes {x.shape}, {branch.shape} do not match hidden={cfg.hidden}")
  return plgpu.kernel(
      functools.partial(_body, cfg=cfg),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(x.shape[0] // cfg.block_rows,),
      grid_names=("blocks",),
      scratch_types=[cfg.tile_type, cfg.tile_type],
  )(x, branch)
