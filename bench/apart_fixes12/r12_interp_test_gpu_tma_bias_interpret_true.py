"""Tests of the Mosaic GPU bias + squared-ReLU epilogue, run on CPU through the interpreter.

pytest collects the `test_*` functions; `target()` is the smallest shape of the sweep. The kernel loads
its tiles with TMA (`copy_gmem_to_smem`) into shared memory and stores them back the same way.
"""
# fix-rate: kind=interpret_params meaning=preserving

from __future__ import annotations

import functools
import itertools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

BLOCK_ROWS = 8


def _bias_relu2_body(x_gmem, b_gmem, o_gmem, x_smem, b_smem, loaded):
  i = jax.lax.axis_index("rows")
  rows = pl.ds(i * BLOCK_ROWS, BLOCK_ROWS)
  plgpu.copy_gmem_to_smem(x_gmem.at[rows], x_smem, loaded)
  plgpu.copy_gmem_to_smem(b_gmem, b_smem, loaded)
  plgpu.barrier_wait(loaded)
  h = jnp.maximum(x_smem[...] + b_smem[...], 0.0)
  x_smem[...] = h * h
  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(x_smem, o_gmem.at[rows])
  plgpu.wait_smem_to_gmem(0)


def bias_relu2(x, bias, *, interpret: bool = False):
  rows, cols = x.shape
  return plgpu.kernel(
      _bias_relu2_body,
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      scratch_types=[plgpu.SMEM((BLOCK_ROWS, cols), x.dtype), plgpu.SMEM((BLOCK_ROWS, cols), x.dtype),
                     plgpu.Barrier(num_arrivals=2)],
      grid=(rows // BLOCK_ROWS,),
      grid_names=("rows",),
      interpret=interpret,
  )(x, bias)


def _make(rows, cols):
  x = (jnp.arange(rows * cols, dtype=jnp.float32).reshape(rows, cols) % 11) - 5
  bias = jnp.broadcast_to((jnp.arange(cols, dtype=jnp.float32) % 3) - 1, (BLOCK_ROWS, cols))
  return x, bias


def _reference(x, bias):
  h = np.maximum(np.asarray(x) + np.asarray(bias)[:1], 0.0)
  return h * h


SHAPES = list(itertools.product((16, 32), (128, 256)))


def _check(rows, cols):
  x, bias = _make(rows, cols)
  got = jax.jit(functools.partial(bias_relu2, interpret=True))(x, bias)
  np.testing.assert_array_equal(np.asarray(got), _reference(x, bias))


def test_small():
  _check(*SHAPES[0])


def test_sweep():
  for rows, cols in SHAPES:
    _check(rows, cols)


def expected():
  return _reference(*_make(*SHAPES[0]))


def target():
  return functools.partial(bias_relu2, interpret=True), _make(*SHAPES[0]), "interpret"
