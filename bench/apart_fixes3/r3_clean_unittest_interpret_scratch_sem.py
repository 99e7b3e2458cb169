"""Tests for the two-phase prefix-offset kernel, run under the Pallas interpreter on CPU CI.

The kernel writes `x * scale` to a temporary, fences the two phases with a scratch semaphore
(signal after the write, wait before the read), then writes `tmp + offset`. The tests pass
`interpret=True` so they run without a GPU.
"""
# fix-rate: clean

import functools
import unittest

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

def _two_phase_kernel(x_gmem, out_gmem, tmp_gmem, phase_done, *, scale, offset):
  tmp_gmem[...] = x_gmem[...] * scale
  pl.semaphore_signal(phase_done)
  pl.semaphore_wait(phase_done)
  out_gmem[...] = tmp_gmem[...] + offset


@functools.partial(jax.jit, static_argnames=("scale", "offset", "interpret"))
def scale_offset(x, *, scale=2.0, offset=1.0, interpret=False):
  out, _ = plgpu.kernel(
      functools.partial(_two_phase_kernel, scale=scale, offset=offset),
      out_type=(jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct(x.shape, x.dtype)),
      scratch_types=[plgpu.SemaphoreType.REGULAR],
      interpret=interpret,
  )(x)
  return out


class ScaleOffsetTest(unittest.TestCase):

  def _check(self, rows, scale, offset):
    x = jnp.arange(rows * 128, dtype=jnp.float32).reshape(rows, 128) / 100.0
    got = scale_offset(x, scale=scale, offset=offset, interpret=True)
    np.testing.assert_allclose(np.asarray(got), np.asarray(x * scale + offset), rtol=1e-6)

  def test_small(self):
    self._check(8, 2.0, 1.0)

  def test_tall(self):
    self._check(32, 0.5, -3.0)

  def test_identity(self):
    self._check(16, 1.0, 0.0)


def _example():
  return jnp.arange(16 * 128, dtype=jnp.float32).reshape(16, 128)


def target():
  return (lambda x: scale_offset(x, interpret=True)), (_example(),), "interpret"


def expected():
  return _example() * 2.0 + 1.0


if __name__ == "__main__":
  unittest.main()
