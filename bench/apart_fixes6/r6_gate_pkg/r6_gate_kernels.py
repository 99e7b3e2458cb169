"""SwiGLU gating kernels with a per-launch checksum row.

`gated_with_checksum` writes `silu(gate) * up` block by block; once every block of the grid has
written its rows, block 0 stores the column sums of the whole output into a checksum row that the
numerics monitor compares against the unfused path.  The completion count is a semaphore every
block of the grid shares.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

GRID_AXIS = "row_blocks"


def _silu(v):
  return v / (1.0 + jnp.exp(-v))


def _gated_rows(gate_gmem, up_gmem, o_gmem, rows):
  g = gate_gmem[rows].astype(jnp.float32)
  u = up_gmem[rows].astype(jnp.float32)
  o_gmem[rows] = (_silu(g) * u).astype(o_gmem.dtype)


def _gate_body(gate_gmem, up_gmem, o_gmem, sum_gmem, *, block_rows: int, num_blocks: int):
  block = jax.lax.axis_index(GRID_AXIS)

  def with_counter(written):
    for r in range(block_rows):
      _gated_rows(gate_gmem, up_gmem, o_gmem, block * block_rows + r)

    @pl.when(block != 0)
    def _done():
      pl.semaphore_signal(written, 1)

    @pl.when(block == 0)
    def _checksum():
      pl.semaphore_wait(written, num_blocks - 1)
      total = jnp.zeros(sum_gmem.shape, jnp.float32)
      for r in range(block_rows * num_blocks):
        total += o_gmem[r].astype(jnp.float32)
      sum_gmem[...] = total

  # One counter for the whole grid: every block signals the same semaphore.
  pl.run_scoped(with_counter, plgpu.SemaphoreType.REGULAR, collective_axes=GRID_AXIS)


def gated_with_checksum(gate: jax.Array, up: jax.Array, block_rows: int = 4):
  rows, cols = gate.shape
  num_blocks = rows // block_rows
  kernel = plgpu.kernel(
      functools.partial(_gate_body, block_rows=block_rows, num_blocks=num_blocks),
      out_type=(jax.ShapeDtypeStruct(gate.shape, gate.dtype), jax.ShapeDtypeStruct((cols,), jnp.float32)),
      grid=(num_blocks,),
      grid_names=(GRID_AXIS,),
  )
  return kernel(gate, up)
