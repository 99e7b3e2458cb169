"""Two warpgroups meet on a get_global "barrier" inside the true branch of a lax.cond on a flag."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)
FLAG = jax.ShapeDtypeStruct((1,), jnp.int32)


def body(flag_ref, x_ref, o_ref, met_ref):
  def meet():
    plgpu.barrier_arrive(met_ref)
    plgpu.barrier_wait(met_ref)

  def skip():
    pass

  jax.lax.cond(flag_ref[0] != 0, meet, skip)
  o_ref[...] = x_ref[...] * 2.0


def target():
  return plgpu.kernel(
    body,
    out_type=X,
    num_threads=2,
    thread_name="wg",
    scratch_types=[plgpu.Barrier(num_arrivals=2)],
  ), (FLAG, X), "cuda"
