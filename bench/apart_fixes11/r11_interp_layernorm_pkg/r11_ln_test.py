"""Tests of the layernorm kernel, run interpreted on CPU CI."""
# fix-rate: kind=scratch meaning=preserving

import unittest

import jax
import jax.numpy as jnp
import numpy as np

import r11_ln_buffers as buffers
import r11_ln_kernel


def _rows(n):
  """Rows whose mean and variance are exact in f32 (two values per row, +-k around c)."""
  c = np.arange(n, dtype=np.float32)[:, None]
  k = (np.arange(n, dtype=np.float32)[:, None] % 3) + 1.0
  sign = np.where(np.arange(buffers.WIDTH) % 2 == 0, 1.0, -1.0).astype(np.float32)
  return c + k * sign


def _reference(x):
  mean = x.mean(axis=-1, keepdims=True)
  var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
  return (x - mean) / np.sqrt(var + buffers.EPS)


class LayerNormTest(unittest.TestCase):

  def test_matches_reference(self):
    x = _rows(16)
    got = r11_ln_kernel.layernorm(jnp.asarray(x), interpret=True)
    np.testing.assert_allclose(np.asarray(got), _reference(x), rtol=1e-5, atol=1e-5)


def _interpreted(x):
  return r11_ln_kernel.layernorm(x, interpret=True)


def target():
  return _interpreted, (jnp.asarray(_rows(16)),), "interpret"


def expected():
  return np.asarray(jax.jit(_pure)(jnp.asarray(_rows(16))))


def _pure(x):
  mean = jnp.mean(x, axis=-1, keepdims=True)
  c = x - mean
  var = jnp.mean(c * c, axis=-1, keepdims=True)
  return c * jax.lax.rsqrt(var + buffers.EPS)


if __name__ == "__main__":
  unittest.main()
