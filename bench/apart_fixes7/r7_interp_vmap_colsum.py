"""Batched column sums with a Pallas kernel, tested interpreted on the CPU.

`column_sums(x)` reduces a (rows, cols) matrix over rows, a block of rows per grid step, keeping the
running total in a float32 VMEM accumulator. Batches go through `jax.vmap` over the single-matrix
launch (Pallas adds the batch as a leading grid axis). The module's self-test runs the kernel in
interpret mode, so it checks the kernel on a laptop without a TPU.
"""

# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

BLOCK_ROWS = 8
COLS = 128
INTERPRET = jax.default_backend() != "tpu"


def _colsum_kernel(x_ref, o_ref):
  step = pl.program_id(0)
  acc = pl.get_global(pltpu.VMEM((1, COLS), jnp.float32))

  @pl.when(step == 0)
  def _zero():
    acc[...] = jnp.zeros_like(acc)

  acc[...] += jnp.sum(x_ref[...].astype(jnp.float32), axis=0, keepdims=True)

  @pl.when(step == pl.num_programs(0) - 1)
  def _emit():
    o_ref[...] = acc[...]


@functools.partial(jax.jit, static_argnames=("interpret",))
def column_sums(x: jax.Array, interpret: bool = INTERPRET) -> jax.Array:
  rows, cols = x.shape
  assert cols == COLS and rows % BLOCK_ROWS == 0, x.shape
  out = pl.pallas_call(
      _colsum_kernel,
      grid=(rows // BLOCK_ROWS,),
      in_specs=[pl.BlockSpec((BLOCK_ROWS, COLS), lambda i: (i, 0))],
      out_specs=pl.BlockSpec((1, COLS), lambda i: (0, 0)),
      out_shape=jax.ShapeDtypeStruct((1, COLS), jnp.float32),
      interpret=interpret,
  )(x)
  return out[0]


batched_column_sums = jax.vmap(column_sums)

_X = np.arange(3 * 32 * COLS, dtype=np.float32).reshape(3, 32, COLS) % 7


def target():
  return batched_column_sums, (jnp.asarray(_X),), "interpret"


def expected():
  return _X.sum(axis=1)


if __name__ == "__main__":
  got = batched_column_sums(jnp.asarray(_X))
  np.testing.assert_array_equal(np.asarray(got), expected())
  print("ok", got.shape)
