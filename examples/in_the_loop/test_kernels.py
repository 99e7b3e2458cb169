"""The tests that reach the kernels; `pallas-lsp check --trace` runs them with every launch lowered by
JAX instead of run, so they run on a machine without a GPU as well."""

import unittest

import jax.numpy as jnp
import numpy as np

from kernels import add_one, scaled_rows, staged, widened


class KernelTest(unittest.TestCase):

    def test_add_one(self):
        inputs = [jnp.arange(n, dtype=jnp.float32) for n in (128, 256)]
        outputs = [add_one(x) for x in inputs]
        for x, y in zip(inputs, outputs):
            np.testing.assert_allclose(y, x + 1.0)

    def test_scaled_rows(self):
        x = jnp.ones((8, 128), jnp.float32)
        np.testing.assert_allclose(scaled_rows(x, 2.0), x * 2.0)

    def test_staged(self):
        x = jnp.ones((128,), jnp.float32)
        np.testing.assert_allclose(staged(x), x)

    def test_widened(self):
        widened(jnp.ones((128,), jnp.float32))
