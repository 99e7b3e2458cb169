"""Tests of `r16_poollib` on the CPU (TPU interpreter)."""
# fix-rate: kind=scratch meaning=preserving
import functools
import unittest

import numpy as np
import jax
import jax.numpy as jnp

from r16_poollib import POOL, mean_pool_rows

INTERPRET = jax.default_backend() != "tpu"


def _data(rows, cols):
  return (np.arange(rows * cols, dtype=np.float32).reshape(rows, cols) % 8) * 0.5


class MeanPoolTest(unittest.TestCase):

  def test_matches_numpy(self):
    x = _data(4 * POOL, 128)
    got = mean_pool_rows(jnp.asarray(x), interpret=INTERPRET)
    np.testing.assert_array_equal(np.asarray(got), x.reshape(4, POOL, 128).mean(1))

  def test_constant_rows(self):
    x = np.full((2 * POOL, 256), 3.0, np.float32)
    got = mean_pool_rows(jnp.asarray(x), interpret=INTERPRET)
    np.testing.assert_array_equal(np.asarray(got), np.full((2, 256), 3.0, np.float32))


_X = _data(4 * POOL, 128)


def target():
  return functools.partial(mean_pool_rows, interpret=INTERPRET), (jnp.asarray(_X),), "interpret"


def expected():
  return _X.reshape(4, POOL, 128).sum(1) * np.float32(1.0 / POOL)


if __name__ == "__main__":
  unittest.main()
