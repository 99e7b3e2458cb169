"""CPU reproduction of a flag-polling kernel with the TPU interpreter."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_ref, o_ref, flag):
  pl.semaphore_signal(flag, 1)
  pl.semaphore_wait(flag, 1, decrement=False)
  o_ref[...] = x_ref[...] * 4.0


def run(x):
  return pl.pallas_call(
      kernel,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      scratch_shapes=[pltpu.SemaphoreType.REGULAR],
      interpret=pltpu.InterpretParams(),
  )(x)


def target():
  return run, (jnp.ones((8, 128), jnp.float32),), "interpret"


if __name__ == "__main__":
  print(jax.jit(run)(jnp.ones((8, 128), jnp.float32)))
