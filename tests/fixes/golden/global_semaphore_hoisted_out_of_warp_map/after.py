"""PAL003: get_global inside a @plgpu.warp_map function: Mosaic GPU has no warp-level get_global lowering."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  o_ref[...] = x_ref[...]

  flag = pl.get_global(plgpu.SemaphoreType.REGULAR)

  @plgpu.warp_map
  def _per_warp(warp_id):
    @pl.when(warp_id == 0)
    def _():
      pl.semaphore_signal(flag)
      pl.semaphore_wait(flag)


def target():
  return plgpu.kernel(body, out_type=X), (X,), "cuda"
