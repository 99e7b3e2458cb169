"""Warp-level code whose WarpMesh is held in a module name asks for the flag itself: asked for before it."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

WARPS = plgpu.WarpMesh(axis_name="warp")


def body(x_ref, y_ref):
  flag = pl.get_global(plgpu.SemaphoreType.REGULAR)

  @pl.core_map(WARPS)
  def _per_warp():
    warp = jax.lax.axis_index("warp")

    @pl.when(warp == 0)
    def _raise():
      pl.semaphore_signal(flag)
      pl.semaphore_wait(flag)

  y_ref[...] = x_ref[...]


def target():
  io = jax.ShapeDtypeStruct((128,), jnp.float32)
  return plgpu.kernel(body, out_type=io), (io,), "cuda"
