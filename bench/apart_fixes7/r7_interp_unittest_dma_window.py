"""Tests of a sliding-window gather kernel under the TPU interpreter.

`window_gather(x, starts)` copies, for every output block `i`, the `WINDOW` rows of `x` starting at
`starts[i]` (a scalar-prefetched table) with a local DMA from HBM into the output block: the
gather a speculative-decoding verifier uses to pull the draft window of each sequence. The test
class runs it with `pltpu.InterpretParams`, so the DMA and its semaphore are simulated on the CPU
(`dma_execution_mode="eager"` so races show up deterministically).
"""

# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import unittest

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

WINDOW = 8
COLS = 128


def _gather_kernel(starts_ref, x_hbm, o_ref):
  i = pl.program_id(0)
  sem = pl.get_global(pltpu.SemaphoreType.DMA)
  copy = pltpu.make_async_copy(x_hbm.at[pl.ds(starts_ref[i], WINDOW)], o_ref, sem)
  copy.start()
  copy.wait()


def window_gather(x: jax.Array, starts: jax.Array, *, interpret=False) -> jax.Array:
  num_windows = starts.shape[0]
  return pl.pallas_call(
      _gather_kernel,
      grid_spec=pltpu.PrefetchScalarGridSpec(
          num_scalar_prefetch=1,
          grid=(num_windows,),
          in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
          out_specs=pl.BlockSpec((WINDOW, COLS), lambda i, starts: (i, 0)),
      ),
      out_shape=jax.ShapeDtypeStruct((num_windows * WINDOW, COLS), x.dtype),
      interpret=interpret,
  )(starts, x)


def _reference(x: np.ndarray, starts: np.ndarray) -> np.ndarray:
  return np.concatenate([x[s:s + WINDOW] for s in starts])


class WindowGatherTest(unittest.TestCase):
  interpret_params = None

  @classmethod
  def setUpClass(cls):
    cls.interpret_params = pltpu.InterpretParams(dma_execution_mode="eager")
    cls.x = np.arange(64 * COLS, dtype=np.float32).reshape(64, COLS)
    cls.starts = np.array([0, 5, 17, 40, 56], dtype=np.int32)

  def run_kernel(self, x, starts):
    fn = jax.jit(lambda a, b: window_gather(a, b, interpret=self.interpret_params))
    return fn(jnp.asarray(x), jnp.asarray(starts))

  def test_matches_reference(self):
    got = self.run_kernel(self.x, self.starts)
    np.testing.assert_array_equal(np.asarray(got), _reference(self.x, self.starts))

  def test_repeated_start(self):
    starts = np.array([3, 3], dtype=np.int32)
    got = self.run_kernel(self.x, starts)
    np.testing.assert_array_equal(np.asarray(got), _reference(self.x, starts))


def target():
  WindowGatherTest.setUpClass()
  case = WindowGatherTest("test_matches_reference")
  fn = lambda x, s: window_gather(x, s, interpret=case.interpret_params)
  return fn, (jnp.asarray(case.x), jnp.asarray(case.starts)), "interpret"


def expected():
  WindowGatherTest.setUpClass()
  return _reference(WindowGatherTest.x, WindowGatherTest.starts)


if __name__ == "__main__":
  unittest.main()
