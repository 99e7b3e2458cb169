"""Pieces shared by the stages of the two-stage norm epilogue: row windows, tile staging, TMA."""

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

TILE_ROWS = 64
GRID_AXIS = "row_tile"


def row_window():
  """This CTA's rows."""
  return pl.ds(jax.lax.axis_index(GRID_AXIS) * TILE_ROWS, TILE_ROWS)


def acquire_tile(width: int, dtype):
  """The shared-memory tile a stage works in."""
  return pl.get_global(plgpu.SMEM((TILE_ROWS, width), dtype))


def load_rows(src_gmem, tile, barrier):
  plgpu.copy_gmem_to_smem(src_gmem.at[row_window()], tile, barrier)
  plgpu.barrier_wait(barrier)


def store_rows(tile, dst_gmem):
  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(tile, dst_gmem.at[row_window()])
  plgpu.wait_smem_to_gmem(0)


def launch_params(rows: int) -> dict:
  if rows % TILE_ROWS:
    raise ValueError(f"rows={rows} must be a multiple of {TILE_ROWS}")
  return dict(grid=(rows // TILE_ROWS,), grid_names=(GRID_AXIS,),
              scratch_types=[plgpu.Barrier(num_arrivals=1)])
