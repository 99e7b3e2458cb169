"""A non-decrementing wait the TPU interpreter refuses: a wait, then the count signalled back (unsafe)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def copy_kernel(x_ref, o_ref, sems):
  o_ref[...] = x_ref[...] * 2.0
  pl.semaphore_signal(sems.at[1], 2)
  # the count stays at 2 for the wait below
  pl.semaphore_wait(sems.at[1], 2, decrement=False)  # peek
  pl.semaphore_wait(sems.at[1], 2)


def target():
  fn = pl.pallas_call(copy_kernel, out_shape=X, scratch_shapes=[pltpu.SemaphoreType.REGULAR((2,))],
                      interpret=pltpu.InterpretParams())
  return fn, (jnp.ones((8, 128), jnp.float32),), "interpret"


def expected():
  return jnp.full((8, 128), 2.0, jnp.float32)
