"""Two flags from get_global in a kernel launched over a grid (each block owns its pair)."""
# fix-rate: clean

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def two_phase(a_ref, b_ref, out_ref):
  load_flag = pl.get_global(plgpu.SemaphoreType.REGULAR)
  store_flag = pl.get_global(plgpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(load_flag)
  pl.semaphore_wait(load_flag)
  out_ref[...] = a_ref[...] - b_ref[...]
  pl.semaphore_signal(store_flag)
  pl.semaphore_wait(store_flag)


def target():
  io = jax.ShapeDtypeStruct((128,), jnp.float32)
  fn = plgpu.kernel(two_phase, out_type=io, grid=(2,), grid_names=("tile",))
  return fn, (io, io), "cuda"
