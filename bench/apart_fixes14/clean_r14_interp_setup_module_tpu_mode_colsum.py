"""CPU tests for the column-sum kernel used by the attention-sink statistics (Pallas TPU, interpreted).

The module switches the whole process to the TPU interpreter once, in
`setUpModule`, so the kernels under test are launched exactly as in production.
"""
# fix-rate: clean

from __future__ import annotations

import functools
import unittest

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ROWS, COLS, BLOCK_ROWS = 32, 128, 8


def _colsum_kernel(x_ref, o_ref, acc):
  i = pl.program_id(0)

  @pl.when(i == 0)
  def _():
    acc[...] = jnp.zeros_like(acc)

  acc[...] += x_ref[...]

  @pl.when(i == pl.num_programs(0) - 1)
  def _():
    o_ref[...] = jnp.sum(acc[...], axis=0, keepdims=True)


@jax.jit
def column_sums(x: jax.Array) -> jax.Array:
  rows, cols = x.shape
  return pl.pallas_call(
      _colsum_kernel,
      out_shape=jax.ShapeDtypeStruct((1, cols), jnp.float32),
      grid=(rows // BLOCK_ROWS,),
      in_specs=[pl.BlockSpec((BLOCK_ROWS, cols), lambda i: (i, 0))],
      out_specs=pl.BlockSpec((1, cols), lambda i: (0, 0)),
      scratch_shapes=[pltpu.VMEM((BLOCK_ROWS, cols), jnp.float32)],
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
  )(x)


def setUpModule():
  pltpu.set_tpu_interpret_mode(pltpu.InterpretParams(dma_execution_mode="eager"))


def tearDownModule():
  pltpu.set_tpu_interpret_mode(None)


_X = (np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS) % 11) - 5.0


def expected():
  return _X.sum(axis=0, keepdims=True)


class ColumnSumsTest(unittest.TestCase):

  def test_matches_numpy(self):
    np.testing.assert_array_equal(np.asarray(column_sums(jnp.asarray(_X))), expected())

  def test_zeros(self):
    out = column_sums(jnp.zeros((ROWS, COLS), jnp.float32))
    self.assertEqual(float(jnp.abs(out).max()), 0.0)


def target():
  def under_module_setup(x):
    setUpModule()
    try:
      return column_sums(x)
    finally:
      tearDownModule()

  return under_module_setup, (jnp.asarray(_X),), "interpret"


if __name__ == "__main__":
  unittest.main()
