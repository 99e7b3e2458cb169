"""Block-chained prefix sum of row tiles on Mosaic GPU (a "decoupled look-back" with a chain of flags).

`tile_prefix(x)` returns `o` with `o[b] = x[b] + o[b - 1]` for the (ROWS, COLS) row tiles `b` of `x`:
the running total of per-layer updates in a scan over blocks. Every CTA loads its tile, waits for the
flag its predecessor raises once its own output tile is in global memory, adds that tile, stores its
result and raises the flag of its successor. The flags are a grid-wide array of REGULAR semaphores,
one per block, that every CTA of the grid must see: `pl.get_global` allocates them for the whole grid.
"""

# fix-rate: clean

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

ROWS = 64
COLS = 128


class TilePrefix:
  """Namespace of the kernel's pieces; `TilePrefix.launch(x)` runs it."""

  @staticmethod
  def tile_rows(block):
    return pl.ds(block * ROWS, ROWS)

  @staticmethod
  def body(x_gmem, o_gmem, tile, prev, x_barrier, prev_barrier, *, num_blocks: int):
    block = pl.program_id(0)

    flags = pl.get_global(plgpu.SemaphoreType.REGULAR((num_blocks,)))
    plgpu.copy_gmem_to_smem(x_gmem.at[TilePrefix.tile_rows(block)], tile, x_barrier)
    plgpu.barrier_wait(x_barrier)

    @pl.when(block > 0)
    def _add_predecessor():
      pl.semaphore_wait(flags.at[block], 1)
      plgpu.copy_gmem_to_smem(o_gmem.at[TilePrefix.tile_rows(block - 1)], prev, prev_barrier)
      plgpu.barrier_wait(prev_barrier)
      tile[...] = tile[...] + prev[...]

    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(tile, o_gmem.at[TilePrefix.tile_rows(block)])
    plgpu.wait_smem_to_gmem(0)

    @pl.when(block + 1 < num_blocks)
    def _release_successor():
      pl.semaphore_signal(flags.at[block + 1], 1)

  @classmethod
  def launch(cls, x: jax.Array) -> jax.Array:
    n, cols = x.shape
    if cols != COLS or n % ROWS:
      raise ValueError(f"expected (k*{ROWS}, {COLS}), got {x.shape}")
    num_blocks = n // ROWS
    tile = plgpu.SMEM((ROWS, COLS), x.dtype)
    return plgpu.kernel(
        functools.partial(cls.body, num_blocks=num_blocks),
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(num_blocks,),
        grid_names=("blocks",),
        scratch_types=[tile, tile, plgpu.Barrier(num_arrivals=1), plgpu.Barrier(num_arrivals=1)],
    )(x)


tile_prefix = jax.jit(TilePrefix.launch)


def target():
  return tile_prefix, (jax.ShapeDtypeStruct((8 * ROWS, COLS), jnp.float32),), "cuda"
