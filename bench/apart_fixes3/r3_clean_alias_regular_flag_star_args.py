"""Blockwise scale with a last-block-done counter (Mosaic GPU), through the package's compat layer.

Each CTA scales its block, then bumps a grid-wide REGULAR semaphore obtained with
`get_global` (looked up by `getattr` on the `P` alias, as the compat layer does for every
entry point). The TMA load's (src, dst, barrier) triple is splatted from a tuple; the barrier is a
scratch buffer of the launch.
"""
# fix-rate: clean

import functools

import jax
import jax.experimental.pallas as P
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

_ENTRY_POINTS = ("get_global", "semaphore_signal", "ds")
_compat = {name: getattr(P, name) for name in _ENTRY_POINTS}

BLOCK_ROWS = 64


def _scale_count_kernel(factor, x_gmem, out_gmem, tile, loaded):
  block = jax.lax.axis_index("b")
  rows = _compat["ds"](block * BLOCK_ROWS, BLOCK_ROWS)
  blocks_done = _compat["get_global"](plgpu.SemaphoreType.REGULAR)

  load = (x_gmem.at[rows], tile, loaded)
  plgpu.copy_gmem_to_smem(*load)
  plgpu.barrier_wait(load[-1])
  tile[...] = tile[...] * factor
  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(tile, out_gmem.at[rows])
  plgpu.wait_smem_to_gmem(0)
  _compat["semaphore_signal"](blocks_done)


def scale_blocks(x: jax.Array, factor: float = 0.5) -> jax.Array:
  rows, width = x.shape
  if rows % BLOCK_ROWS:
    raise ValueError(f"{rows=} must be a multiple of {BLOCK_ROWS}")
  return plgpu.kernel(
      functools.partial(_scale_count_kernel, float(factor)),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(rows // BLOCK_ROWS,),
      grid_names=("b",),
      scratch_types=[plgpu.SMEM((BLOCK_ROWS, width), x.dtype), plgpu.Barrier(num_arrivals=1)],
  )(x)


def target():
  return jax.jit(scale_blocks), (jax.ShapeDtypeStruct((256, 128), jnp.float32),), "cuda"


if __name__ == "__main__":
  x = jnp.ones((256, 128), jnp.float32)
  print(jax.jit(scale_blocks)(x).sum())
