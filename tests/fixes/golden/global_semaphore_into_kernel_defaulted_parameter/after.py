"""A get_global passed into a kernel whose body ends with a defaulted parameter (one no operand fills):
the body asks for the semaphore itself, and the defaulted parameter keeps its default."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, scale=2.0):
  sem_ref = pl.get_global(plgpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(sem_ref)
  pl.semaphore_wait(sem_ref)
  o_ref[...] = x_ref[...] * scale


kernel = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",))


@jax.jit
def run(x):
  return kernel(x)


def target():
  return run, (X,), "cuda"
