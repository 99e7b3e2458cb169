"""Scale-and-total ("y = 2x, total = sum of y's row blocks") for both backends of the ops library.

The TPU path walks the row blocks in order and keeps the total in its resident output block. The GPU
path runs the blocks concurrently: every block publishes its scaled tile, the blocks other than 0
signal an arrival semaphore, and block 0 waits for them before summing the published tiles. The
semaphore kinds of both backends are kept in one table shared by the ops of this library.
"""
# fix-rate: kind=regular_semaphore meaning=preserving

import dataclasses
import enum
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu


class Backend(enum.Enum):
  TPU = "tpu"
  GPU = "gpu"


@dataclasses.dataclass(frozen=True)
class SyncKinds:
  copy_done: object
  arrival: object


SYNC_KINDS = {
    Backend.TPU: SyncKinds(copy_done=pltpu.SemaphoreType.DMA, arrival=pltpu.SemaphoreType.BARRIER),
    Backend.GPU: SyncKinds(copy_done=plgpu.Barrier(), arrival=plgpu.SemaphoreType.BARRIER),
}

NUM_BLOCKS, BLOCK_ROWS, COLS = 4, 64, 128


def _tpu_body(x_ref, y_ref, total_ref):
  @pl.when(pl.program_id(0) == 0)
  def _init():
    total_ref[...] = jnp.zeros_like(total_ref)

  y = x_ref[...] * 2.0
  y_ref[...] = y
  total_ref[...] += y


def scale_and_total_tpu(x):
  block = (BLOCK_ROWS, COLS)
  return pl.pallas_call(
      _tpu_body,
      out_shape=(jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct(block, x.dtype)),
      grid=(NUM_BLOCKS,),
      in_specs=[pl.BlockSpec(block, lambda i: (i, 0))],
      out_specs=(pl.BlockSpec(block, lambda i: (i, 0)), pl.BlockSpec(block, lambda i: (0, 0))),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
  )(x)


def _gpu_body(x_gmem, y_gmem, total_gmem, tile, acc, loaded):
  block = jax.lax.axis_index("blocks")
  arrivals = pl.get_global(SYNC_KINDS[Backend.GPU].arrival)
  plgpu.copy_gmem_to_smem(x_gmem.at[pl.ds(block * BLOCK_ROWS, BLOCK_ROWS)], tile, loaded)
  plgpu.barrier_wait(loaded)
  tile[...] = tile[...] * 2.0
  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(tile, y_gmem.at[pl.ds(block * BLOCK_ROWS, BLOCK_ROWS)])
  plgpu.wait_smem_to_gmem(0)

  @pl.when(block != 0)
  def _arrive():
    pl.semaphore_signal(arrivals, 1)

  @pl.when(block == 0)
  def _sum_published_tiles():
    pl.semaphore_wait(arrivals, NUM_BLOCKS - 1)
    acc[...] = jnp.zeros_like(acc)

    @pl.loop(0, NUM_BLOCKS)
    def _add(i):
      plgpu.copy_gmem_to_smem(y_gmem.at[pl.ds(i * BLOCK_ROWS, BLOCK_ROWS)], tile, loaded)
      plgpu.barrier_wait(loaded)
      acc[...] = acc[...] + tile[...]

    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(acc, total_gmem)
    plgpu.wait_smem_to_gmem(0)


def scale_and_total_gpu(x):
  kinds = SYNC_KINDS[Backend.GPU]
  tile = plgpu.SMEM((BLOCK_ROWS, COLS), jnp.float32)
  return plgpu.kernel(
      _gpu_body,
      out_type=(jax.ShapeDtypeStruct(x.shape, x.dtype),
                jax.ShapeDtypeStruct((BLOCK_ROWS, COLS), x.dtype)),
      grid=(NUM_BLOCKS,),
      grid_names=("blocks",),
      scratch_types=[tile, tile, kinds.copy_done],
  )(x)


OPS = {Backend.TPU: scale_and_total_tpu, Backend.GPU: scale_and_total_gpu}


def scale_and_total(x, backend: Backend):
  return OPS[backend](x)


def target():
  x = jax.ShapeDtypeStruct((NUM_BLOCKS * BLOCK_ROWS, COLS), jnp.float32)
  return functools.partial(scale_and_total, backend=Backend.GPU), (x,), "cuda"


if __name__ == "__main__":
  backend = Backend.GPU if jax.default_backend() == "gpu" else Backend.TPU
  x = jnp.ones((NUM_BLOCKS * BLOCK_ROWS, COLS), jnp.float32)
  y, total = scale_and_total(x, backend)
  print(backend.value, float(total[0, 0]))
