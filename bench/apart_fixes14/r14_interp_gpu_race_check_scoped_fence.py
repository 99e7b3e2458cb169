"""Race-check test of the Mosaic GPU two-pass scale kernel (interpreted on CPU).

The second pass must see the first; a kernel-local REGULAR semaphore scoped
with `pl.run_scoped` fences them. The test module runs the kernel under the
GPU interpreter's parameters from `RACE_CHECK`.
"""
# fix-rate: kind=interpret_true meaning=preserving

from __future__ import annotations

import functools
import unittest

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

N = 256
RACE_CHECK = plgpu.InterpretGPUParams(detect_races=True)


def _two_pass_body(x_ref, o_ref, *, gain: float):
  def fenced(fence):
    o_ref[...] = x_ref[...] * gain
    pl.semaphore_signal(fence, 1)
    pl.semaphore_wait(fence, 1)
    o_ref[...] = o_ref[...] - 1.0

  pl.run_scoped(fenced, plgpu.SemaphoreType.REGULAR)


def two_pass(x: jax.Array, *, gain: float, interpret=False) -> jax.Array:
  return plgpu.kernel(
      functools.partial(_two_pass_body, gain=gain),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      interpret=interpret,
  )(x)


_X = np.arange(N, dtype=np.float32) / 8.0


def expected():
  return _X * 3.0 - 1.0


class TwoPassRaceTest(unittest.TestCase):

  def test_values(self):
    got = jax.jit(functools.partial(two_pass, gain=3.0, interpret=RACE_CHECK))(jnp.asarray(_X))
    np.testing.assert_array_equal(np.asarray(got), expected())


def target():
  return functools.partial(two_pass, gain=3.0, interpret=RACE_CHECK), (jnp.asarray(_X),), "interpret"


if __name__ == "__main__":
  unittest.main()
