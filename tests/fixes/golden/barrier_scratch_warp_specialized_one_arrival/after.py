"""Warp specialization: warpgroup 0 stages the tile and arrives on a "barrier" the body took from get_global,
warpgroup 1 waits for it. One warpgroup arrives per phase, so the barrier needs one arrival, not two."""
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, tile_ref, staged_ref):
  wg = lax.axis_index("wg")

  @pl.when(wg == 0)
  def _produce():
    tile_ref[...] = x_ref[...] * 2.0
    plgpu.barrier_arrive(staged_ref)

  @pl.when(wg == 1)
  def _consume():
    plgpu.barrier_wait(staged_ref)
    o_ref[...] = tile_ref[...] + 1.0


def target():
  return plgpu.kernel(body, out_type=X, num_threads=2, thread_name="wg",
                      scratch_types=[plgpu.SMEM((128,), jnp.float32), plgpu.Barrier()]), (X,), "cuda"
