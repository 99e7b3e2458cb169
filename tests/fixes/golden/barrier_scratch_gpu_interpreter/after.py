"""A "barrier" from get_global in a kernel the GPU interpreter runs: it runs an SMEM plgpu.Barrier scratch."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, step_ref):
  o_ref[...] = x_ref[...] + 1.0
  plgpu.barrier_arrive(step_ref)
  plgpu.barrier_wait(step_ref)


def target():
  fn = plgpu.kernel(body, out_type=X, scratch_types=[plgpu.Barrier()])

  def run(x):
    with plgpu.force_gpu_interpret_mode():
      return fn(x)
  return run, (jnp.zeros((128,), jnp.float32),), "interpret"


def expected():
  return jnp.ones((128,), jnp.float32)
