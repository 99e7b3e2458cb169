"""A gridded kernel that scopes a semaphore over the grid axis with run_scoped."""
# fix-rate: kind=get_global meaning=preserving

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

BLOCKS = 4


def tiled_copy(x_ref, o_ref):
  def with_sem(sem):
    pl.semaphore_signal(sem)
    pl.semaphore_wait(sem)
    o_ref[...] = x_ref[...] - 2.0

  pl.run_scoped(with_sem, plgpu.SemaphoreType.REGULAR, collective_axes=("block",))


def target():
  io = jax.ShapeDtypeStruct((128,), jnp.float32)
  fn = plgpu.kernel(tiled_copy, out_type=io, grid=(BLOCKS,), grid_names=("block",))
  return fn, (io,), "cuda"
