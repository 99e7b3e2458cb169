"""A non-decrementing wait compiled for a TPU, which lowers it as a wait that decrements: a wait, then the
count signalled back (unsafe: the compiled kernel now leaves the count, as the source asks)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def copy_kernel(x_ref, o_ref, sems):
  o_ref[...] = x_ref[...] * 2.0
  pl.semaphore_signal(sems.at[1], 2)
  pl.semaphore_wait(sems.at[1], 2)  # the count stays for the wait below
  pl.semaphore_signal(sems.at[1], 2)
  pl.semaphore_wait(sems.at[1], 2)


def target():
  fn = pl.pallas_call(copy_kernel, out_shape=X, scratch_shapes=[pltpu.SemaphoreType.REGULAR((2,))],
                      compiler_params=pltpu.CompilerParams())
  return fn, (X,), "tpu"
