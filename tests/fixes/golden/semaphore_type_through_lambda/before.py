"""A TPU semaphore type asked of get_global through a lambda, in a Mosaic GPU kernel that signals and waits on it."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  get_flag = lambda: pl.get_global(pltpu.SemaphoreType.REGULAR)
  flag = get_flag()
  pl.semaphore_signal(flag)
  pl.semaphore_wait(flag)
  o_ref[...] = x_ref[...] + 1.0


kernel = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",))


def target():
  return kernel, (X,), "cuda"
