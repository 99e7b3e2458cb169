"""Two warpgroups arrive on a "barrier" the body took from get_global, then wait for it."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, ready_ref):
  # both warpgroups meet here
  plgpu.barrier_arrive(ready_ref)
  plgpu.barrier_wait(ready_ref)
  o_ref[...] = x_ref[...] + 1.0


def target():
  return plgpu.kernel(
    body,
    out_type=X,
    num_threads=2,
    thread_name="wg",
    scratch_types=[plgpu.Barrier(num_arrivals=2)],
  ), (X,), "cuda"
