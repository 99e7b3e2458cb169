"""Two warpgroups meet on a get_global "barrier" inside the true branch of a lax.cond on a flag."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)
FLAG = jax.ShapeDtypeStruct((1,), jnp.int32)


def body(flag_ref, x_ref, o_ref):
  def meet():
    met = pl.get_global(plgpu.SemaphoreType.REGULAR)
    plgpu.barrier_arrive(met)
    plgpu.barrier_wait(met)

  def skip():
    pass

  jax.lax.cond(flag_ref[0] != 0, meet, skip)
  o_ref[...] = x_ref[...] * 2.0


def target():
  return plgpu.kernel(body, out_type=X, num_threads=2, thread_name="wg"), (FLAG, X), "cuda"
