"""A CPU test of a row-sum kernel that runs it with the GPU interpreter."""
# fix-rate: kind=scratch meaning=preserving

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def rowsum_body(x_ref, o_ref):
  guard = pl.get_global(plgpu.SemaphoreType.REGULAR)
  o_ref[...] = jnp.sum(x_ref[...], axis=1)
  pl.semaphore_signal(guard)
  pl.semaphore_wait(guard)


class TestRowSum:
  interpret = True

  def kernel(self):
    out = jax.ShapeDtypeStruct((8,), jnp.float32)
    return plgpu.kernel(rowsum_body, out_type=out, interpret=self.interpret)

  def inputs(self):
    return (jnp.arange(64, dtype=jnp.float32).reshape(8, 8),)

  def test_rowsum(self):
    (x,) = self.inputs()
    np.testing.assert_array_equal(jax.jit(self.kernel())(x), expected())


def expected():
  return np.arange(64, dtype=np.float32).reshape(8, 8).sum(axis=1)


def target():
  case = TestRowSum()
  return case.kernel(), case.inputs(), "interpret"
