"""Per-expert token sums over a ragged, expert-sorted token list (TPU, megablox-style).

Tokens are sorted by expert; `tile_group[i]` (scalar prefetch) is the expert of row tile `i`, so
consecutive tiles of one expert revisit the same output block. The kernel zeroes the block on the
first tile of each expert, remembered in an SMEM scalar, and accumulates column sums.
"""
# fix-rate: kind=scratch_grid_spec meaning=preserving

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class GroupSumConfig:
  tile_rows: int = 128
  sublanes: int = 8


CONFIGS: dict[tuple[str, tuple[int, int]], GroupSumConfig] = {
    ("bfloat16", (2048, 256)): GroupSumConfig(tile_rows=256),
    ("float32", (1024, 128)): GroupSumConfig(tile_rows=128),
}


def get_default_config(dtype, shape) -> GroupSumConfig:
  return CONFIGS.get((jnp.dtype(dtype).name, tuple(shape)), GroupSumConfig())


def make_tile_groups(group_sizes: np.ndarray, tile_rows: int) -> np.ndarray:
  """Host-side: expert id of every row tile (group sizes must be multiples of `tile_rows`)."""
  return np.repeat(np.arange(len(group_sizes)), np.asarray(group_sizes) // tile_rows).astype(np.int32)


def _group_sum_kernel(tile_group_ref, x_ref, o_ref):
  i = pl.program_id(0)
  last_group = pl.get_global(pltpu.SMEM((1,), jnp.int32))
  g = tile_group_ref[i]

  @pl.when(jnp.logical_or(i == 0, g != last_group[0]))
  def _first_tile_of_group():
    o_ref[...] = jnp.zeros_like(o_ref)

  col_sum = jnp.sum(x_ref[...].astype(jnp.float32), axis=0, keepdims=True)
  o_ref[0] += jnp.broadcast_to(col_sum, o_ref.shape[1:])
  last_group[0] = g


@functools.partial(jax.jit, static_argnames=("num_groups", "cfg"))
def grouped_sum(tile_group, x, num_groups: int, cfg: GroupSumConfig | None = None):
  tokens, hidden = x.shape
  cfg = cfg or get_default_config(x.dtype, x.shape)
  out = pl.pallas_call(
      _group_sum_kernel,
      out_shape=jax.ShapeDtypeStruct((num_groups, cfg.sublanes, hidden), jnp.float32),
      grid_spec=pltpu.PrefetchScalarGridSpec(
          num_scalar_prefetch=1,
          grid=(tokens // cfg.tile_rows,),
          in_specs=[pl.BlockSpec((cfg.tile_rows, hidden), lambda i, groups: (i, 0))],
          out_specs=pl.BlockSpec((1, cfg.sublanes, hidden), lambda i, groups: (groups[i], 0, 0)),
      ),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
  )(tile_group, x)
  return out[:, 0, :]


def target():
  tile_group = jax.ShapeDtypeStruct((8,), jnp.int32)
  x = jax.ShapeDtypeStruct((1024, 128), jnp.float32)
  return functools.partial(grouped_sum, num_groups=4), (tile_group, x), "tpu"
