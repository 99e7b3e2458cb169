"""Chained block scan (running totals of row blocks), ported from the TPU ops to Mosaic GPU.

The TPU kernel was written first and the module's semaphore kinds date from it. On the GPU the blocks
run concurrently, so block b waits for flag b (raised by block b - 1, once it has published its
carry), adds its own tile, publishes the new carry and raises flag b + 1.
"""
# fix-rate: kind=gpu_semaphore_type meaning=preserving

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

NUM_BLOCKS, BLOCK_ROWS, COLS = 4, 64, 128

# Semaphore kinds of the scan ops (shared by both backends).
TILE_COPY_DONE = pltpu.SemaphoreType.DMA
CHAIN_FLAGS = pltpu.SemaphoreType.REGULAR((NUM_BLOCKS,))


def _tpu_scan_body(x_hbm, carry_ref, tile, copy_done):
  block = pl.program_id(0)
  copy = pltpu.make_async_copy(x_hbm.at[pl.ds(block * BLOCK_ROWS, BLOCK_ROWS)], tile, copy_done)
  copy.start()
  copy.wait()

  @pl.when(block == 0)
  def _first():
    carry_ref[...] = tile[...]

  @pl.when(block != 0)
  def _rest():
    carry_ref[...] += tile[...]


def block_scan_tpu(x):
  return pl.pallas_call(
      _tpu_scan_body,
      out_shape=jax.ShapeDtypeStruct((BLOCK_ROWS, COLS), x.dtype),
      grid=(NUM_BLOCKS,),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec((BLOCK_ROWS, COLS), lambda i: (0, 0)),
      scratch_shapes=[pltpu.VMEM((BLOCK_ROWS, COLS), x.dtype), TILE_COPY_DONE],
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
  )(x)


def _gpu_scan_body(x_gmem, carries_gmem, tile, carry, loaded):
  block = jax.lax.axis_index("blocks")
  flags = pl.get_global(CHAIN_FLAGS)
  plgpu.copy_gmem_to_smem(x_gmem.at[pl.ds(block * BLOCK_ROWS, BLOCK_ROWS)], tile, loaded)
  plgpu.barrier_wait(loaded)

  @pl.when(block == 0)
  def _first():
    carry[...] = tile[...]

  @pl.when(block != 0)
  def _after_previous():
    pl.semaphore_wait(flags.at[block], 1)
    plgpu.copy_gmem_to_smem(carries_gmem.at[pl.ds((block - 1) * BLOCK_ROWS, BLOCK_ROWS)], carry, loaded)
    plgpu.barrier_wait(loaded)
    carry[...] = carry[...] + tile[...]

  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(carry, carries_gmem.at[pl.ds(block * BLOCK_ROWS, BLOCK_ROWS)])
  plgpu.wait_smem_to_gmem(0)

  @pl.when(block + 1 < NUM_BLOCKS)
  def _raise_next():
    pl.semaphore_signal(flags.at[block + 1], 1)


def block_scan_gpu(x):
  tile = plgpu.SMEM((BLOCK_ROWS, COLS), jnp.float32)
  carries = plgpu.kernel(
      _gpu_scan_body,
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(NUM_BLOCKS,),
      grid_names=("blocks",),
      scratch_types=[tile, tile, plgpu.Barrier()],
  )(x)
  return carries[-BLOCK_ROWS:]


BACKENDS = {"tpu": block_scan_tpu, "gpu": block_scan_gpu}


def block_total(x, platform: str | None = None):
  """Sum of the row blocks of x, computed as a running scan."""
  return BACKENDS[platform or jax.default_backend()](x)


def target():
  x = jax.ShapeDtypeStruct((NUM_BLOCKS * BLOCK_ROWS, COLS), jnp.float32)
  return functools.partial(block_total, platform="gpu"), (x,), "cuda"


if __name__ == "__main__":
  x = jnp.ones((NUM_BLOCKS * BLOCK_ROWS, COLS), jnp.float32)
  print(float(block_total(x)[0, 0]), "expected", NUM_BLOCKS)
