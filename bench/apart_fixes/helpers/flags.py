"""Flag helpers used by the GPU reduction kernels (and their TPU twin, which skips them)."""

from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def fresh_flag():
  return pl.get_global(plgpu.SemaphoreType.REGULAR)


def pulse(flag):
  pl.semaphore_signal(flag)
  pl.semaphore_wait(flag)
