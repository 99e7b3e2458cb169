"""Tests of the chunked HBM copy with a progress counter, run in the TPU interpreter.

``chunked_copy`` moves an HBM array into a VMEM output in ``num_chunks`` DMAs and
counts finished chunks on a REGULAR semaphore. Before the epilogue doubles the
output it checks (without consuming the count, so a later stage could check it
again) that every chunk is in. These tests run on the CPU under
``pltpu.InterpretParams`` so that the DMA semantics are the TPU ones.
"""

# fix-rate: kind=wait_signal meaning=preserving

import functools
import unittest

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _chunked_copy_kernel(x_hbm, o_ref, copy_sem, progress, *, num_chunks: int):
  rows = x_hbm.shape[0] // num_chunks
  for c in range(num_chunks):
    window = pl.ds(c * rows, rows)
    copy = pltpu.make_async_copy(x_hbm.at[window], o_ref.at[window], copy_sem)
    copy.start()
    copy.wait()
    pl.semaphore_signal(progress, 1)

  # All chunks landed? Leave the count in place for the next stage.
  pl.semaphore_wait(progress, num_chunks, decrement=False)
  o_ref[...] = o_ref[...] * 2


def chunked_copy(x, *, num_chunks: int = 4, interpret=None):
  return pl.pallas_call(
      functools.partial(_chunked_copy_kernel, num_chunks=num_chunks),
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
      scratch_shapes=[pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.REGULAR],
      interpret=interpret,
  )(x)


INTERPRET = pltpu.InterpretParams(dma_execution_mode="on_wait")


class ChunkedCopyTest(unittest.TestCase):

  def _check(self, shape, num_chunks):
    x = jnp.arange(np.prod(shape), dtype=jnp.float32).reshape(shape)
    got = chunked_copy(x, num_chunks=num_chunks, interpret=INTERPRET)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(x) * 2)

  def test_four_chunks(self):
    self._check((32, 128), 4)

  def test_two_chunks(self):
    self._check((16, 128), 2)

  def test_one_chunk(self):
    self._check((8, 128), 1)


def target():
  x = jnp.arange(32 * 128, dtype=jnp.float32).reshape(32, 128)
  fn = functools.partial(chunked_copy, num_chunks=4, interpret=INTERPRET)
  return fn, (x,), "interpret"


def expected():
  return np.arange(32 * 128, dtype=np.float32).reshape(32, 128) * 2


if __name__ == "__main__":
  unittest.main()
