"""Column statistics on a TPU: two outputs, in_specs a comprehension over the operands, one scratch buffer already
listed; the running sum is shaped like the second output's block (`sq_ref.shape`), counted from the end past the
scratch."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _stats_kernel(a_ref, b_ref, sum_ref, sq_ref, tile_ref, running, *, steps):
  k = pl.program_id(1)

  @pl.when(k == 0)
  def _():
    running[...] = jnp.zeros_like(running)

  tile_ref[...] = a_ref[...] - b_ref[...]
  running[...] += jnp.sum(tile_ref[...] * tile_ref[...], axis=0, keepdims=True)
  sum_ref[...] = jnp.sum(tile_ref[...], axis=0, keepdims=True)

  @pl.when(k == steps - 1)
  def _():
    sq_ref[...] = running[...]


def column_stats(a, b, tile=(128, 256)):
  rows, cols = a.shape
  block = pl.BlockSpec(tile, lambda j, k: (k, j))
  steps = rows // tile[0]
  return pl.pallas_call(
      functools.partial(_stats_kernel, steps=steps),
      out_shape=(jax.ShapeDtypeStruct((1, cols), jnp.float32), jax.ShapeDtypeStruct((1, cols), jnp.float32)),
      grid=(cols // tile[1], steps),
      in_specs=[block for _ in (a, b)],
      out_specs=(pl.BlockSpec((1, tile[1]), lambda j, k: (0, j)), pl.BlockSpec((1, tile[1]), lambda j, k: (0, j))),
      scratch_shapes=[
        pltpu.VMEM(tile, jnp.float32), pltpu.VMEM((1, tile[1]), jnp.float32)
      ],
      compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
  )(a, b)


def target():
  a = jax.ShapeDtypeStruct((512, 512), jnp.float32)
  return column_stats, (a, a), "tpu"
