"""Tests for r6_gate_kernels: shapes of the fused SwiGLU with its checksum row.

Run on a GPU with `python -m unittest test_r6_gate`; `target()` is the lowering check used by the
kernel CI on CPU-only runners.
"""

from __future__ import annotations

import unittest

import jax
import jax.numpy as jnp

import r6_gate_kernels

# fix-rate: kind=get_global meaning=preserving

SHAPES = [(16, 128), (32, 256)]


def _reference(gate, up):
  out = (jax.nn.silu(gate.astype(jnp.float32)) * up.astype(jnp.float32)).astype(gate.dtype)
  return out, out.astype(jnp.float32).sum(axis=0)


class GatedChecksumTest(unittest.TestCase):

  def test_matches_reference(self):
    if jax.default_backend() != "gpu":
      self.skipTest("needs a Hopper GPU")
    for shape in SHAPES:
      with self.subTest(shape=shape):
        gate = jax.random.normal(jax.random.key(0), shape, jnp.float32)
        up = jax.random.normal(jax.random.key(1), shape, jnp.float32)
        out, checksum = r6_gate_kernels.gated_with_checksum(gate, up)
        want_out, want_sum = _reference(gate, up)
        self.assertTrue(jnp.allclose(out, want_out, atol=1e-5))
        self.assertTrue(jnp.allclose(checksum, want_sum, rtol=1e-4))


def target():
  spec = jax.ShapeDtypeStruct(SHAPES[0], jnp.float32)
  return r6_gate_kernels.gated_with_checksum, (spec, spec), "cuda"


if __name__ == "__main__":
  unittest.main()
