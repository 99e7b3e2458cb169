"""A get_global of a type named in the jitted function that launches the kernel, passed in as an
argument: the body asks for it itself, and the type's name goes with it."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  kind = plgpu.SemaphoreType.REGULAR  # one flag for the whole grid
  sem_ref = pl.get_global(kind)
  pl.semaphore_signal(sem_ref)
  pl.semaphore_wait(sem_ref)
  o_ref[...] = x_ref[...] + 1.0


kernel = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",))


@jax.jit
def run(x):
  return kernel(x)


def target():
  return run, (X,), "cuda"
