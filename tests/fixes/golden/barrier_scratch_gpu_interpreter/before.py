"""A "barrier" from get_global in a kernel the GPU interpreter runs: it runs an SMEM plgpu.Barrier scratch."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  o_ref[...] = x_ref[...] + 1.0
  step = pl.get_global(plgpu.SemaphoreType.REGULAR)
  plgpu.barrier_arrive(step)
  plgpu.barrier_wait(step)


def target():
  fn = plgpu.kernel(body, out_type=X)

  def run(x):
    with plgpu.force_gpu_interpret_mode():
      return fn(x)
  return run, (jnp.zeros((128,), jnp.float32),), "interpret"


def expected():
  return jnp.ones((128,), jnp.float32)
