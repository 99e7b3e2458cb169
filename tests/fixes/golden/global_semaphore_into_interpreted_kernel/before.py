"""A get_global made in the jitted function and passed into an interpreted kernel: asked for in the body
instead, it would be a get_global under the interpreter (PAL002), so it is the body's scratch semaphore."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, sem_ref, o_ref):
  pl.semaphore_signal(sem_ref)
  pl.semaphore_wait(sem_ref)
  o_ref[...] = x_ref[...] + 1.0


kernel = plgpu.kernel(body, out_type=X, interpret=True)


@jax.jit
def run(x):
  sem = pl.get_global(plgpu.SemaphoreType.REGULAR)
  return kernel(x, sem)


def target():
  return run, (jnp.ones((128,), jnp.float32),), "interpret"


def expected():
  return jnp.ones((128,), jnp.float32) + 1.0
