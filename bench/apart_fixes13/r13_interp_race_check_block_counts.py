"""Nonzero counts per row block, with a race-checked interpreter test.

The kernel counts nonzeros of each (8, 128) block in an SMEM scalar and writes the
count broadcast over its output row. The test class runs it under the TPU interpreter
with race detection, the way our CI validates kernels before they reach hardware.
"""

# fix-rate: kind=scratch meaning=preserving

import unittest

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

BLOCK = (8, 128)


def _count_kernel(x_ref, o_ref):
  count = pl.get_global(pltpu.SMEM((1,), jnp.int32))
  count[0] = jnp.sum((x_ref[...] != 0).astype(jnp.int32))
  o_ref[...] = jnp.full(o_ref.shape, count[0], jnp.int32)


def block_nonzero_counts(x, *, interpret=False):
  nb = x.shape[0] // BLOCK[0]
  return pl.pallas_call(
      _count_kernel,
      grid=(nb,),
      in_specs=[pl.BlockSpec(BLOCK, lambda i: (i, 0))],
      out_specs=pl.BlockSpec((1, 128), lambda i: (i, 0)),
      out_shape=jax.ShapeDtypeStruct((nb, 128), jnp.int32),
      interpret=interpret,
  )(x)[:, 0]


def _race_checked(fn):
  return lambda x: fn(x, interpret=pltpu.InterpretParams(detect_races=True))


def _example():
  x = (jnp.arange(32 * 128, dtype=jnp.float32).reshape(32, 128) % 3) - 1.0
  return (x,)


class BlockCountsTest(unittest.TestCase):

  def test_matches_reference(self):
    (x,) = _example()
    got = jax.jit(_race_checked(block_nonzero_counts))(x)
    np.testing.assert_array_equal(got, expected())


def target():
  return _race_checked(block_nonzero_counts), _example(), "interpret"


def expected():
  (x,) = _example()
  return (np.asarray(x) != 0).reshape(4, -1).sum(axis=1).astype(np.int32)


if __name__ == "__main__":
  unittest.main()
