"""Per-feature count of active (positive) units, for sparsity statistics (TPU).

Ported from the CUDA stats kernel, which accumulated into a global array with
`atomicAdd(&counts[feature], x > 0)` and copied it out at the end.  On TPU the
row blocks run in order on one core, so the counts are carried across the grid.
"""
# fix-rate: kind=scratch meaning=preserving
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

BLOCK_ROWS = 8
FEATURES_PER_BLOCK = 128

# `__device__ int counts[FEATURES_PER_BLOCK];`
COUNTS = pltpu.VMEM((1, FEATURES_PER_BLOCK), jnp.int32)


def active_counts_kernel(x_ref, counts_out_ref):
  row_block = pl.program_id(1)
  counts = pl.get_global(COUNTS)

  @pl.when(row_block == 0)
  def _zero():
    counts[...] = jnp.zeros(counts.shape, counts.dtype)

  active = (x_ref[...] > 0).astype(jnp.int32)
  counts[...] += jnp.sum(active, axis=0, keepdims=True)  # atomicAdd

  @pl.when(row_block == pl.num_programs(1) - 1)
  def _copy_out():  # cudaMemcpy(counts_out, counts, ...)
    counts_out_ref[...] = counts[...]


@jax.jit
def active_counts(x):
  tokens, features = x.shape
  return pl.pallas_call(
      active_counts_kernel,
      out_shape=jax.ShapeDtypeStruct((1, features), jnp.int32),
      grid=(features // FEATURES_PER_BLOCK, tokens // BLOCK_ROWS),
      in_specs=[pl.BlockSpec((BLOCK_ROWS, FEATURES_PER_BLOCK), lambda f, t: (t, f))],
      out_specs=pl.BlockSpec((1, FEATURES_PER_BLOCK), lambda f, t: (0, f)),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
  )(x)


def target():
  return active_counts, (jax.ShapeDtypeStruct((64, 256), jnp.float32),), "tpu"
