"""A decorated kernel run under plgpu.force_gpu_interpret_mode(): the GPU interpreter runs no semaphore."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


@plgpu.kernel(out_type=X, grid=(2,), grid_names=("x",))
def add_one(x_ref, o_ref):
  done = pl.get_global(plgpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(done)
  pl.semaphore_wait(done)
  o_ref[...] = x_ref[...] + 1.0


def run(x):
  # debugging
  y = add_one(x)
  return y


def target():
  return run, (jnp.ones((128,), jnp.float32),), "interpret"
