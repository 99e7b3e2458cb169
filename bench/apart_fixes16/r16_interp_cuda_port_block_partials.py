"""Two-pass row softmax normaliser, ported from a CUDA kernel.

The CUDA kernel wrote per-block row maxima to a global array
(`__device__ float row_max[BLOCK_ROWS]`) in pass one and read them back in
pass two.  Tests at the bottom run it in interpret mode.
"""
# fix-rate: kind=scratch meaning=preserving
import functools

import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

BLOCK_ROWS = 8

# __device__ float row_max[BLOCK_ROWS];
ROW_MAX = pltpu.VMEM((BLOCK_ROWS, 1), jnp.float32)


def softmax_shift_kernel(x_ref, o_ref):
  row_max = pl.get_global(ROW_MAX)
  # pass 1
  row_max[...] = jnp.max(x_ref[...], axis=-1, keepdims=True)
  # pass 2
  o_ref[...] = x_ref[...] - row_max[...]


def softmax_shift(x, *, interpret=False):
  m, d = x.shape
  spec = pl.BlockSpec((BLOCK_ROWS, d), lambda i: (i, 0))
  return pl.pallas_call(
      softmax_shift_kernel,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(m // BLOCK_ROWS,),
      in_specs=[spec],
      out_specs=spec,
      interpret=interpret,
  )(x)


_X = (np.arange(16 * 128, dtype=np.float32).reshape(16, 128) * 3) % 11


def test_softmax_shift_interpret():
  got = jax.jit(functools.partial(softmax_shift, interpret=True))(jnp.asarray(_X))
  np.testing.assert_array_equal(np.asarray(got), expected())


def test_max_is_zero():
  got = jax.jit(functools.partial(softmax_shift, interpret=True))(jnp.asarray(_X))
  assert float(jnp.max(got)) == 0.0


def target():
  return jax.jit(functools.partial(softmax_shift, interpret=True)), (jnp.asarray(_X),), "interpret"


def expected():
  return _X - _X.max(-1, keepdims=True)
