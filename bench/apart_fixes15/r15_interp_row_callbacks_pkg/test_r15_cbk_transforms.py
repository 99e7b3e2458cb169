"""Interpret-mode tests of every row transform against its jnp definition."""
# fix-rate: kind=scratch meaning=preserving

import unittest

import jax
import jax.numpy as jnp
import numpy as np

from r15_cbk_kernel import apply_row_transform
from r15_cbk_transforms import CenterAndGate, Clip

ROWS, WIDTH, BLOCK_ROWS = 32, 128, 8


def _x():
  return jnp.arange(ROWS * WIDTH, dtype=jnp.float32).reshape(ROWS, WIDTH) % 13 - 6.0


def _center_gate_reference(x):
  return jnp.maximum(x - jnp.mean(x, axis=1, keepdims=True), 0.0)


class RowTransformTest(unittest.TestCase):

  def test_clip(self):
    out = apply_row_transform(_x(), Clip(2.0), block_rows=BLOCK_ROWS)
    np.testing.assert_array_equal(out, jnp.clip(_x(), -2.0, 2.0))

  def test_center_gate(self):
    out = apply_row_transform(
        _x(), CenterAndGate(BLOCK_ROWS, WIDTH), block_rows=BLOCK_ROWS
    )
    np.testing.assert_array_equal(out, jax.jit(_center_gate_reference)(_x()))


def target():
  transform = CenterAndGate(BLOCK_ROWS, WIDTH)
  return (lambda x: apply_row_transform(x, transform, block_rows=BLOCK_ROWS)), (_x(),), "interpret"


def expected():
  return jax.jit(_center_gate_reference)(_x())


if __name__ == "__main__":
  unittest.main()
