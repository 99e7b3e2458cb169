"""A TPU kernel run under the TPU interpreter in CI; its flag semaphore comes from get_global."""
# fix-rate: kind=scratch meaning=preserving

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from helpers.staging import tpu_flag

SHAPE = (8, 128)


def add_one(x_ref, o_ref):
  flag = pl.get_global(tpu_flag())
  pl.semaphore_signal(flag)
  pl.semaphore_wait(flag)
  o_ref[...] = x_ref[...] + 1.0


def run_on_ci(x):
  return pl.pallas_call(
      add_one,
      out_shape=jax.ShapeDtypeStruct(SHAPE, jnp.float32),
      interpret=pltpu.InterpretParams(),
  )(x)


def expected():
  return np.arange(8 * 128, dtype=np.float32).reshape(SHAPE) + 1.0


def target():
  return run_on_ci, (jnp.arange(8 * 128, dtype=jnp.float32).reshape(SHAPE),), "interpret"
