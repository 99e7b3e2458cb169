"""A warp-specialised kernel: one warp raises a flag the others wait on."""
# fix-rate: kind=hoist_out_of_warp_region meaning=preserving

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

WARPS = plgpu.WarpMesh(axis_name="warp")


def producer_consumer(x_ref, y_ref):
  @pl.core_map(WARPS)
  def _per_warp():
    flag = pl.get_global(plgpu.SemaphoreType.REGULAR)
    warp = jax.lax.axis_index("warp")

    @pl.when(warp == 0)
    def _raise():
      pl.semaphore_signal(flag)

    @pl.when(warp == 0)
    def _lower():
      pl.semaphore_wait(flag)

  y_ref[...] = x_ref[...]


def target():
  io = jax.ShapeDtypeStruct((128,), jnp.float32)
  return plgpu.kernel(producer_consumer, out_type=io), (io,), "cuda"
