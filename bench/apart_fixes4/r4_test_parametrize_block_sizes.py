"""Tests of the blocked prefix-sum kernel over block sizes, run in the TPU interpreter on any host.

Parametrized through pytest's `pytest_generate_tests` hook (this module is also imported by the
benchmark scripts, whose environment has no pytest).

The kernel walks the rows block by block ("arbitrary" axis) and carries the running per-lane total
from one block to the next in VMEM.
"""
# fix-rate: kind=scratch meaning=preserving

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

LANES = 128
INTERPRET = pltpu.InterpretParams(dma_execution_mode="eager")


def _prefix_sum_kernel(x_ref, o_ref):
  carry_ref = pl.get_global(pltpu.VMEM((1, LANES), jnp.float32))

  @pl.when(pl.program_id(0) == 0)
  def _reset():
    carry_ref[...] = jnp.zeros_like(carry_ref)

  block = jnp.cumsum(x_ref[...].astype(jnp.float32), axis=0) + carry_ref[...]
  o_ref[...] = block.astype(o_ref.dtype)
  carry_ref[...] = block[-1:, :]


def prefix_sum(x: jax.Array, *, block_rows: int, interpret=False) -> jax.Array:
  rows, lanes = x.shape
  assert lanes == LANES and rows % block_rows == 0, (x.shape, block_rows)
  return pl.pallas_call(
      _prefix_sum_kernel,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(rows // block_rows,),
      in_specs=[pl.BlockSpec((block_rows, LANES), lambda i: (i, 0))],
      out_specs=pl.BlockSpec((block_rows, LANES), lambda i: (i, 0)),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
      interpret=interpret,
  )(x)


def _ramp(rows):
  return (jnp.arange(rows * LANES, dtype=jnp.float32).reshape(rows, LANES) % 7) - 3.0


BLOCK_SIZES = {
    "test_prefix_sum_matches_cumsum": [8, 16, 64],
    "test_prefix_sum_of_ones_counts_rows": [8, 32],
}


def pytest_generate_tests(metafunc):
  if "block_rows" in metafunc.fixturenames:
    metafunc.parametrize("block_rows", BLOCK_SIZES[metafunc.function.__name__])
  if "rows" in metafunc.fixturenames:
    metafunc.parametrize("rows", [64, 128])


def test_prefix_sum_matches_cumsum(rows, block_rows):
  x = _ramp(rows)
  got = prefix_sum(x, block_rows=block_rows, interpret=INTERPRET)
  np.testing.assert_allclose(np.asarray(got), np.cumsum(np.asarray(x), axis=0), rtol=1e-6)


def test_prefix_sum_of_ones_counts_rows(block_rows):
  x = jnp.ones((64, LANES), jnp.float32)
  got = prefix_sum(x, block_rows=block_rows, interpret=INTERPRET)
  np.testing.assert_array_equal(np.asarray(got)[:, 0], np.arange(1, 65, dtype=np.float32))


def target():
  fn = functools.partial(prefix_sum, block_rows=16, interpret=INTERPRET)
  return fn, (_ramp(64),), "interpret"


def expected():
  return jnp.cumsum(_ramp(64), axis=0)
