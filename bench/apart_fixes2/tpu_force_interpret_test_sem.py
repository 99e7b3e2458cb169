"""A TPU kernel test that runs under `pltpu.force_tpu_interpret_mode()` on developer machines.

The kernel doubles its block and orders the write with a semaphore it fetched with `pl.get_global`;
the TPU interpreter (like the TPU compiler) wants semaphores in `scratch_shapes`.
"""
# fix-rate: kind=scratch meaning=preserving

import contextlib

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ROWS, COLS = 8, 128


def double_kernel(x_ref, o_ref):
  sem = pl.get_global(pltpu.SemaphoreType.REGULAR)
  o_ref[...] = x_ref[...] * 2.0
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem)


def double(x):
  return pl.pallas_call(
      double_kernel,
      out_shape=jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32),
  )(x)


def maybe_interpret():
  """Interpret on machines without a TPU, compile on a TPU."""
  if jax.default_backend() == "tpu":
    return contextlib.nullcontext()
  return pltpu.force_tpu_interpret_mode()


def run_double(x):
  with maybe_interpret():
    return double(x)


def sample():
  return jnp.arange(ROWS * COLS, dtype=jnp.float32).reshape(ROWS, COLS)


def expected():
  return np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS) * 2.0


def test_double():
  np.testing.assert_array_equal(jax.jit(run_double)(sample()), expected())


def target():
  return run_double, (sample(),), "interpret"


if __name__ == "__main__":
  test_double()
  print("double ok")
