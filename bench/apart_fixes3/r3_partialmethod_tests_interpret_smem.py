"""Parametrized CPU tests of a leaky-ReLU-with-bias Mosaic GPU kernel, run interpreted.

Test cases are generated from `_SHAPES x _SLOPES` with `functools.partialmethod`, the way
absltest's `parameterized.product` would expand them; every case runs the kernel with
`interpret=True` so CI needs no GPU.
"""
# fix-rate: kind=scratch meaning=preserving

import functools
import itertools
import unittest

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def _leaky_bias_kernel(x_gmem, b_gmem, out_gmem, *, slope):
  staged = pl.get_global(plgpu.SMEM(x_gmem.shape, x_gmem.dtype))
  staged[...] = x_gmem[...] + b_gmem[...]
  v = staged[...]
  out_gmem[...] = jnp.where(v >= 0, v, slope * v)


def leaky_bias(x, b, *, slope=0.01, interpret=False):
  return plgpu.kernel(
      functools.partial(_leaky_bias_kernel, slope=slope),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      interpret=interpret,
  )(x, jnp.broadcast_to(b, x.shape))


def leaky_bias_reference(x, b, slope=0.01):
  v = x + b
  return jnp.where(v >= 0, v, slope * v)


_SHAPES = ((8, 128), (16, 128), (8, 256))
_SLOPES = (0.0, 0.01, 0.2)


class LeakyBiasTest(unittest.TestCase):

  def _run_case(self, shape, slope):
    x = jnp.linspace(-2.0, 2.0, shape[0] * shape[1], dtype=jnp.float32).reshape(shape)
    b = jnp.full((shape[1],), 0.25, jnp.float32)
    got = jax.jit(functools.partial(leaky_bias, slope=slope, interpret=True))(x, b)
    np.testing.assert_allclose(got, leaky_bias_reference(x, b, slope), rtol=1e-6, atol=1e-6)


for _shape, _slope in itertools.product(_SHAPES, _SLOPES):
  _name = "test_{}x{}_slope_{}".format(*_shape, str(_slope).replace(".", "p"))
  setattr(LeakyBiasTest, _name, functools.partialmethod(LeakyBiasTest._run_case, _shape, _slope))


def _inputs():
  x = jnp.linspace(-2.0, 2.0, 8 * 128, dtype=jnp.float32).reshape(8, 128)
  return x, jnp.full((128,), 0.25, jnp.float32)


def target():
  return functools.partial(leaky_bias, slope=0.2, interpret=True), _inputs(), "interpret"


def expected():
  return leaky_bias_reference(*_inputs(), slope=0.2)


if __name__ == "__main__":
  unittest.main()
