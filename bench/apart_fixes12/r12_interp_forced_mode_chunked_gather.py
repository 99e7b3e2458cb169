"""Token gather for sequence packing (TPU): rows `idx[i]` of an HBM table copied chunk by chunk.

The tests force the TPU interpreter with `pltpu.force_tpu_interpret_mode()` through a context-manager
fixture, so the same `pallas_call` (with no `interpret=` of its own) is exercised on CPU CI.
"""
# fix-rate: kind=scratch_grid_spec meaning=preserving

from __future__ import annotations

import contextlib
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ROWS_PER_STEP = 8


def _gather_kernel(idx_ref, table_hbm, o_ref):
  step = pl.program_id(0)
  sem = pl.get_global(pltpu.SemaphoreType.DMA)
  copies = []
  for r in range(ROWS_PER_STEP):
    row = idx_ref[step * ROWS_PER_STEP + r]
    copies.append(pltpu.make_async_copy(table_hbm.at[pl.ds(row, 1)], o_ref.at[pl.ds(r, 1)], sem))
  for c in copies:
    c.start()
  for c in copies:
    c.wait()


@jax.jit
def gather_rows(idx, table):
  n = idx.shape[0]
  return pl.pallas_call(
      _gather_kernel,
      out_shape=jax.ShapeDtypeStruct((n, table.shape[1]), table.dtype),
      grid_spec=pltpu.PrefetchScalarGridSpec(
          num_scalar_prefetch=1,
          grid=(n // ROWS_PER_STEP,),
          in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
          out_specs=pl.BlockSpec((ROWS_PER_STEP, table.shape[1]), lambda i, idx: (i, 0)),
      ),
  )(idx, table)


@contextlib.contextmanager
def interpreted():
  """Fixture: run every Pallas TPU kernel in the block through the interpreter."""
  with pltpu.force_tpu_interpret_mode():
    yield


def _case(n=16, vocab=64, width=128):
  idx = (jnp.arange(n, dtype=jnp.int32) * 5) % vocab
  table = jnp.arange(vocab * width, dtype=jnp.float32).reshape(vocab, width)
  return idx, table


def _interpreted_gather(idx, table):
  with interpreted():
    return gather_rows(idx, table)


def test_gather_matches_take():
  idx, table = _case()
  with interpreted():
    got = gather_rows(idx, table)
  np.testing.assert_array_equal(np.asarray(got), np.asarray(table)[np.asarray(idx)])


def expected():
  idx, table = _case()
  return np.asarray(table)[np.asarray(idx)]


def target():
  return _interpreted_gather, _case(), "interpret"
