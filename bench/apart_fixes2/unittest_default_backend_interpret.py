"""Unit tests of a TPU cumulative-sum kernel that run it interpreted when the default backend is the CPU.

`INTERPRET = jax.default_backend() == "cpu"` is the project's convention so that CI (CPU only) runs the
same tests as the TPU machines. The accumulator was fetched with `pl.get_global(pltpu.VMEM(...))`.
"""
# fix-rate: kind=scratch meaning=preserving

import unittest

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

INTERPRET = jax.default_backend() == "cpu"
ROWS, COLS, STEPS = 8, 128, 4


def running_sum_kernel(x_ref, o_ref):
  acc = pl.get_global(pltpu.VMEM((ROWS, COLS), jnp.float32))
  i = pl.program_id(0)

  @pl.when(i == 0)
  def _init():
    acc[...] = jnp.zeros((ROWS, COLS), jnp.float32)

  acc[...] += x_ref[...]
  o_ref[...] = acc[...]


def running_sum(x):
  return pl.pallas_call(
      running_sum_kernel,
      grid=(STEPS,),
      in_specs=[pl.BlockSpec((ROWS, COLS), lambda i: (i, 0))],
      out_specs=pl.BlockSpec((ROWS, COLS), lambda i: (i, 0)),
      out_shape=jax.ShapeDtypeStruct((STEPS * ROWS, COLS), jnp.float32),
      interpret=INTERPRET,
  )(x)


def sample():
  return jnp.ones((STEPS * ROWS, COLS), jnp.float32)


def expected():
  blocks = np.ones((STEPS, ROWS, COLS), np.float32)
  return np.cumsum(blocks, axis=0).reshape(STEPS * ROWS, COLS)


class RunningSumTest(unittest.TestCase):
  def test_ones(self):
    np.testing.assert_array_equal(jax.jit(running_sum)(sample()), expected())

  def test_shape(self):
    self.assertEqual(jax.eval_shape(running_sum, sample()).shape, (STEPS * ROWS, COLS))


def target():
  return running_sum, (sample(),), "interpret"


if __name__ == "__main__":
  unittest.main()
