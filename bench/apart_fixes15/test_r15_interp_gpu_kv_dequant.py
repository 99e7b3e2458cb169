"""CPU tests of the Mosaic GPU KV-cache dequantisation kernel, run under the GPU interpreter.

`@pytest.mark.parametrize` over cache shapes; each case launches the kernel with
`interpret=plgpu.InterpretGPUParams()` so the same kernel code is exercised on CI machines
without a GPU. The dequantised block is staged in f32 shared memory before the per-head scale.
"""
# fix-rate: kind=scratch meaning=preserving

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

try:
  import pytest
except ImportError:
  pytest = None

BLOCK_TOKENS = 32


def _parametrize(names, values):
  if pytest is not None:
    return pytest.mark.parametrize(names, values)
  def wrap(fn):
    fn.cases = list(values)
    return fn
  return wrap


def _dequant_body(q_ref, zero_ref, scale_ref, o_ref):
  rows = pl.ds(jax.lax.axis_index("t") * BLOCK_TOKENS, BLOCK_TOKENS)
  staged = pl.get_global(plgpu.SMEM((BLOCK_TOKENS, q_ref.shape[1]), jnp.float32))
  staged[...] = q_ref[rows, :] - zero_ref[rows, :]
  o_ref[rows, :] = staged[...] * scale_ref[rows, :]


def dequantize(q, zero, scale, *, interpret=None):
  if interpret is None:
    interpret = plgpu.InterpretGPUParams() if jax.default_backend() == "cpu" else False
  return plgpu.kernel(
      _dequant_body,
      out_type=jax.ShapeDtypeStruct(q.shape, jnp.float32),
      grid=(q.shape[0] // BLOCK_TOKENS,),
      grid_names=("t",),
      interpret=interpret,
  )(q, zero, scale)


def _cache(tokens, width):
  k1, k2, k3 = jax.random.split(jax.random.key(tokens + width), 3)
  q = jax.random.randint(k1, (tokens, width), 0, 16).astype(jnp.float32)
  zero = jax.random.randint(k2, (tokens, width), 0, 4).astype(jnp.float32)
  scale = jax.random.randint(k3, (tokens, width), 1, 8).astype(jnp.float32) / 8
  return q, zero, scale


@functools.partial(jax.jit)
def _reference(q, zero, scale):
  return (q - zero) * scale


@_parametrize("tokens,width", [(64, 128), (128, 128), (64, 256)])
def test_dequantize_matches_reference(tokens, width):
  args = _cache(tokens, width)
  np.testing.assert_array_equal(dequantize(*args), _reference(*args))


def target():
  return dequantize, _cache(64, 128), "interpret"


def expected():
  return _reference(*_cache(64, 128))


if __name__ == "__main__":
  for case in test_dequantize_matches_reference.cases:
    test_dequantize_matches_reference(*case)
  print("ok")
