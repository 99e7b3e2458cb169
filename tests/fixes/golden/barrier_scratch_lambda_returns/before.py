"""A "barrier" from a get_global a lambda returns: the lambda's call is no use as a semaphore."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  get_sync = lambda: pl.get_global(plgpu.SemaphoreType.REGULAR)
  sync = get_sync()
  plgpu.barrier_arrive(sync)
  plgpu.barrier_wait(sync)
  o_ref[...] = x_ref[...] + 1.0


kernel = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",))


def target():
  return kernel, (X,), "cuda"
