"""An SMEM barrier type held in a local variable: the launch cannot see the variable, so the scratch
type is spelled from its value."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, barrier_ref):
  kind = plgpu.Barrier(num_arrivals=1)
  plgpu.barrier_arrive(barrier_ref)
  plgpu.barrier_wait(barrier_ref)
  o_ref[...] = x_ref[...] + 1.0


def target():
  kernel = plgpu.kernel(
    body,
    out_type=X,
    grid=(2,),
    grid_names=("x",),
    scratch_types=[plgpu.Barrier(num_arrivals=1)],
  )
  return kernel, (X,), "cuda"
