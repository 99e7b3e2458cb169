"""The tests that reach the TPU kernels; `pallas-lsp check --trace` runs them with every launch lowered
by JAX for a TPU instead of run, so they run on a machine without one as well."""

import unittest

import jax.numpy as jnp
import numpy as np

from tpu_kernels import counted, doubled


class TpuKernelTest(unittest.TestCase):

    def test_doubled(self):
        for rows in (8, 16):
            x = jnp.ones((rows, 128), jnp.float32)
            y = doubled(x)
        np.testing.assert_allclose(y, x * 2.0)

    def test_counted(self):
        x = jnp.ones((8, 128), jnp.float32)
        np.testing.assert_allclose(counted(x), x)
