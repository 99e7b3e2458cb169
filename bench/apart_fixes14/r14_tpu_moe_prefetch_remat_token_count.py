"""MoE combine weights with a per-expert token counter, under rematerialization (Pallas TPU).

The group table (expert id of each row block) is scalar-prefetched; rows are
scaled by their expert's gate and the kernel counts the blocks each expert
received into an SMEM scalar. The layer wraps the op in `jax.checkpoint`.
"""
# fix-rate: kind=scratch_grid_spec meaning=preserving

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

BLOCK_ROWS, HIDDEN, NUM_EXPERTS = 8, 256, 4


def _combine_kernel(group_ids, gates_ref, x_ref, y_ref, count_ref):
  b = pl.program_id(0)
  blocks_seen = pl.get_global(pltpu.SMEM((1,), jnp.int32))

  @pl.when(b == 0)
  def _():
    blocks_seen[0] = 0

  expert = group_ids[b]
  y_ref[...] = x_ref[...] * gates_ref[expert]
  blocks_seen[0] = blocks_seen[0] + 1
  count_ref[...] = jnp.full(count_ref.shape, blocks_seen[0], jnp.int32)


def _grid_spec(num_blocks: int) -> pltpu.PrefetchScalarGridSpec:
  return pltpu.PrefetchScalarGridSpec(
      num_scalar_prefetch=1,
      grid=(num_blocks,),
      in_specs=[
          pl.BlockSpec(memory_space=pltpu.SMEM),
          pl.BlockSpec((BLOCK_ROWS, HIDDEN), lambda b, gid: (b, 0)),
      ],
      out_specs=[
          pl.BlockSpec((BLOCK_ROWS, HIDDEN), lambda b, gid: (b, 0)),
          pl.BlockSpec((8, 128), lambda b, gid: (0, 0)),
      ],
  )


def moe_combine(group_ids: jax.Array, gates: jax.Array, x: jax.Array):
  num_blocks = x.shape[0] // BLOCK_ROWS
  return pl.pallas_call(
      _combine_kernel,
      grid_spec=_grid_spec(num_blocks),
      out_shape=[jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct((8, 128), jnp.int32)],
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
  )(group_ids, gates, x)


@functools.partial(jax.checkpoint, policy=jax.checkpoint_policies.nothing_saveable)
def combine_layer(group_ids, gates, x):
  y, counts = moe_combine(group_ids, gates, x)
  return y, counts[0, 0]


def target():
  args = (
      jax.ShapeDtypeStruct((8,), jnp.int32),
      jax.ShapeDtypeStruct((NUM_EXPERTS,), jnp.float32),
      jax.ShapeDtypeStruct((8 * BLOCK_ROWS, HIDDEN), jnp.float32),
  )
  return jax.jit(combine_layer), args, "tpu"


if __name__ == "__main__":
  gid = jnp.asarray(np.repeat(np.arange(NUM_EXPERTS), 2), jnp.int32)
  print(jax.jit(combine_layer)(gid, jnp.ones((NUM_EXPERTS,)), jnp.ones((64, HIDDEN)))[1])
