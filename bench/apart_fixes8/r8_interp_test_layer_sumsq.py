"""Tests of the per-row sum of squares used by the RMSNorm backward pass.

``row_sumsq`` reduces ``(rows, hidden)`` to ``(rows, 1)`` with a hidden-axis grid;
the partial sums of a row block are kept in an f32 accumulator held by a small
helper, ``_accumulate``, shared with the variance kernel. The tests run in
interpret mode (``interpret=True``) so they pass on CPU CI.
"""

# fix-rate: kind=run_scoped meaning=preserving

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

BLOCK_ROWS = 8


def _accumulate(x_ref, o_ref, num_chunks: int):
  """Adds the squares of ``x_ref``'s ``num_chunks`` lane chunks, row by row."""
  acc = pl.get_global(pltpu.VMEM((BLOCK_ROWS, 128), jnp.float32))
  acc[...] = jnp.zeros_like(acc)
  for c in range(num_chunks):
    chunk = x_ref[:, c * 128:(c + 1) * 128].astype(jnp.float32)
    acc[...] += chunk * chunk
  o_ref[...] = jnp.sum(acc[...], axis=1, keepdims=True)


def _sumsq_kernel(x_ref, o_ref, *, num_chunks: int):
  _accumulate(x_ref, o_ref, num_chunks)


def row_sumsq(x, *, interpret=True):
  rows, hidden = x.shape
  return pl.pallas_call(
      functools.partial(_sumsq_kernel, num_chunks=hidden // 128),
      out_shape=jax.ShapeDtypeStruct((rows, 1), jnp.float32),
      grid=(rows // BLOCK_ROWS,),
      in_specs=[pl.BlockSpec((BLOCK_ROWS, hidden), lambda i: (i, 0))],
      out_specs=pl.BlockSpec((BLOCK_ROWS, 1), lambda i: (i, 0)),
      interpret=interpret,
  )(x)


def _inputs(rows=16, hidden=256):
  return jnp.arange(rows * hidden, dtype=jnp.float32).reshape(rows, hidden) % 7


def test_row_sumsq_matches_numpy():
  x = _inputs()
  got = row_sumsq(x)
  np.testing.assert_allclose(np.asarray(got), np.sum(np.asarray(x) ** 2, axis=1, keepdims=True))


def test_row_sumsq_single_chunk():
  x = _inputs(hidden=128)
  got = row_sumsq(x)
  np.testing.assert_allclose(np.asarray(got), np.sum(np.asarray(x) ** 2, axis=1, keepdims=True))


def target():
  return jax.jit(row_sumsq), (_inputs(),), "interpret"


def expected():
  x = np.arange(16 * 256, dtype=np.float32).reshape(16, 256) % 7
  return np.sum(x * x, axis=1, keepdims=True)


if __name__ == "__main__":
  test_row_sumsq_matches_numpy()
  test_row_sumsq_single_chunk()
  print("ok")
