"""A TPU kernel debugged on CPU with the TPU interpreter, counting via a global semaphore."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

INTERPRET = pltpu.InterpretParams(detect_races=False)


def kernel(x_ref, o_ref):
  sem = pl.get_global(pltpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem, 1)
  o_ref[...] = x_ref[...]


def run(x):
  return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), interpret=INTERPRET)(x)


def target():
  return run, (jnp.ones((8, 128), jnp.float32),), "interpret"


if __name__ == "__main__":
  print(jax.jit(run)(jnp.ones((8, 128), jnp.float32)))
