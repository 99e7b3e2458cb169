"""Tests for `center_affine`, run with the Pallas interpreter on CPU."""

# fix-rate: kind=scratch meaning=preserving

import functools
import unittest

import jax
import jax.numpy as jnp
import numpy as np

import r13_norm_ops as ops

INTERPRET = jax.default_backend() != "tpu"


def _example():
  x = (jnp.arange(64 * 128, dtype=jnp.float32).reshape(64, 128) % 4) * 2.0
  gamma = jnp.full((128,), 0.5, jnp.float32)
  beta = jnp.ones((128,), jnp.float32)
  return x, gamma, beta


def _reference(x, gamma, beta):
  x = np.asarray(x)
  return (x - x.mean(axis=-1, keepdims=True)) * np.asarray(gamma) + np.asarray(beta)


class CenterAffineTest(unittest.TestCase):

  def test_against_reference(self):
    got = ops.center_affine(*_example(), interpret=INTERPRET)
    np.testing.assert_array_equal(np.asarray(got), _reference(*_example()))

  def test_block_rows_fit_budget(self):
    self.assertEqual(ops._block_rows(64, 128), 64)


def target():
  return functools.partial(ops.center_affine, interpret=INTERPRET), _example(), "interpret"


def expected():
  return _reference(*_example())


if __name__ == "__main__":
  unittest.main()
