"""A lax.switch on a mode picks the branch where only warpgroup 1 arrives; warpgroup 0 waits."""
from jax import lax
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)
MODE = jax.ShapeDtypeStruct((1,), jnp.int32)


def body(mode_ref, x_ref, o_ref, sync_ref):
  wg = lax.axis_index("wg")

  def handoff():

    @pl.when(wg == 1)
    def _():
      plgpu.barrier_arrive(sync_ref)

    @pl.when(wg == 0)
    def _():
      plgpu.barrier_wait(sync_ref)

  def nothing():
    pass

  lax.switch(mode_ref[0] % 2, [nothing, handoff])
  o_ref[...] = x_ref[...] + 3.0


def target():
  return plgpu.kernel(
    body, out_type=X, num_threads=2, thread_name="wg", scratch_types=[plgpu.Barrier()]
  ), (MODE, X), "cuda"
