"""Synchronisation helpers shared by the collective kernels in this folder."""
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def block_counters(num_blocks: int):
  """One global counter per block, living in GMEM for the whole launch."""
  return pl.get_global(plgpu.SemaphoreType.REGULAR((num_blocks,)))


def grid_barrier():
  """A grid-wide barrier semaphore."""
  return pl.get_global(plgpu.SemaphoreType.BARRIER)


def arrive_and_wait(counters, me, num_blocks):
  pl.semaphore_signal(counters.at[me])
  pl.semaphore_wait(counters.at[me], 1)


def scratch_flags(n):
  """A scratch buffer for per-block flags."""
  return pl.get_global(plgpu.GMEM((n,), jnp.int32))
