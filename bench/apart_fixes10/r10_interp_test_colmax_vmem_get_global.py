"""Column max over row blocks, with its unit tests run on the CPU through the Pallas interpreter.

Run with `python -m pytest r10_interp_test_colmax_vmem_get_global.py` or as a script.
"""
# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import functools
import unittest

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

BLOCK_ROWS = 8


def _colmax_kernel(x_ref, o_ref):
  running = pl.get_global(pltpu.VMEM((1, x_ref.shape[1]), jnp.float32))
  i = pl.program_id(0)

  @pl.when(i == 0)
  def _init():
    running[...] = jnp.full(running.shape, -jnp.inf, jnp.float32)

  running[...] = jnp.maximum(running[...], jnp.max(x_ref[...], axis=0, keepdims=True))
  o_ref[...] = running[...]


@functools.partial(jax.jit, static_argnames=("interpret",))
def column_max(x: jax.Array, interpret: bool = False) -> jax.Array:
  rows, cols = x.shape
  out = pl.pallas_call(
      _colmax_kernel,
      out_shape=jax.ShapeDtypeStruct((1, cols), jnp.float32),
      grid=(rows // BLOCK_ROWS,),
      in_specs=[pl.BlockSpec((BLOCK_ROWS, cols), lambda i: (i, 0))],
      out_specs=pl.BlockSpec((1, cols), lambda i: (0, 0)),
      interpret=interpret,
  )(x)
  return out[0]


def _sample(rows: int = 32, cols: int = 128) -> np.ndarray:
  return np.sin(np.arange(rows * cols, dtype=np.float32)).reshape(rows, cols) * 10.0


class ColumnMaxTest(unittest.TestCase):

  def test_matches_numpy(self):
    x = _sample()
    np.testing.assert_allclose(column_max(jnp.asarray(x), interpret=True), x.max(axis=0))

  def test_negative_input(self):
    x = -np.abs(_sample(16, 128)) - 1.0
    np.testing.assert_allclose(column_max(jnp.asarray(x), interpret=True), x.max(axis=0))


def target():
  return functools.partial(column_max, interpret=True), (jnp.asarray(_sample()),), "interpret"


def expected():
  return _sample().max(axis=0)


if __name__ == "__main__":
  unittest.main()
