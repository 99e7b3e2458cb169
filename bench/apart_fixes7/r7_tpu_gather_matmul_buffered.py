"""Row-gathered matmul for MoE expert dispatch on TPU.

`gather_matmul(token_rows, x, w)` computes `x[token_rows] @ w` without materialising the gathered
activations: the row indices are scalar-prefetched into SMEM and drive the index map of the LHS
BlockSpec, so each grid step DMAs exactly the token block it needs. The weight stream's
buffer count is tuned per chip (`pl.Buffered(n)`): single-buffered where the weight block is reused
across a long run of token blocks, double-buffered otherwise.

Block sizes come from `TUNING`, keyed by `(chip, dtype)`; unknown chips fall back to the v5e row.
"""

# fix-rate: kind=scratch_grid_spec meaning=preserving

from __future__ import annotations

import dataclasses
import functools
from typing import Literal

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

Chip = Literal["v5e", "v5p", "v6e"]


@dataclasses.dataclass(frozen=True)
class Blocks:
  block_m: int
  block_n: int
  block_k: int
  weight_buffers: int = 2


TUNING: dict[tuple[Chip, str], Blocks] = {
    ("v5e", "bfloat16"): Blocks(128, 128, 256, weight_buffers=2),
    ("v5e", "float32"): Blocks(128, 128, 128, weight_buffers=1),
    ("v5p", "bfloat16"): Blocks(256, 256, 512),
    ("v6e", "bfloat16"): Blocks(256, 256, 512),
}


def blocks_for(chip: Chip, dtype) -> Blocks:
  key = (chip, jnp.dtype(dtype).name)
  return TUNING.get(key, TUNING[("v5e", key[1] if ("v5e", key[1]) in TUNING else "float32")])


def _gather_matmul_kernel(rows_ref, x_ref, w_ref, o_ref, *, blocks: Blocks):
  """One (token block, column block) tile; the K axis is the innermost grid axis."""
  del rows_ref  # only read by the index maps
  k = pl.program_id(2)
  acc_ref = pl.get_global(pltpu.VMEM((blocks.block_m, blocks.block_n), jnp.float32))

  @pl.when(k == 0)
  def _init():
    acc_ref[...] = jnp.zeros_like(acc_ref)

  acc_ref[...] += jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32)

  @pl.when(k == pl.num_programs(2) - 1)
  def _store():
    o_ref[...] = acc_ref[...].astype(o_ref.dtype)


def _grid_spec(blocks: Blocks, num_row_blocks: int, n: int, k: int) -> pltpu.PrefetchScalarGridSpec:
  grid = (num_row_blocks, n // blocks.block_n, k // blocks.block_k)
  return pltpu.PrefetchScalarGridSpec(
      num_scalar_prefetch=1,
      grid=grid,
      in_specs=[
          pl.BlockSpec((blocks.block_m, blocks.block_k), lambda i, j, kk, rows: (rows[i], kk)),
          pl.BlockSpec((blocks.block_k, blocks.block_n), lambda i, j, kk, rows: (kk, j),
                       pipeline_mode=pl.Buffered(blocks.weight_buffers)),
      ],
      out_specs=pl.BlockSpec((blocks.block_m, blocks.block_n), lambda i, j, kk, rows: (i, j)),
  )


@functools.partial(jax.jit, static_argnames=("chip",))
def gather_matmul(row_blocks: jax.Array, x: jax.Array, w: jax.Array, *, chip: Chip = "v5e") -> jax.Array:
  """`row_blocks[i]` is the block of `x` whose rows form output block `i`."""
  blocks = blocks_for(chip, x.dtype)
  (_, k), (_, n) = x.shape, w.shape
  if k % blocks.block_k or n % blocks.block_n:
    raise ValueError(f"K={k}, N={n} must be multiples of {blocks}")
  num_row_blocks = row_blocks.shape[0]
  return pl.pallas_call(
      functools.partial(_gather_matmul_kernel, blocks=blocks),
      grid_spec=_grid_spec(blocks, num_row_blocks, n, k),
      out_shape=jax.ShapeDtypeStruct((num_row_blocks * blocks.block_m, n), x.dtype),
      compiler_params=pltpu.CompilerParams(
          dimension_semantics=("parallel", "parallel", "arbitrary")),
  )(row_blocks, x, w)


def target():
  rows = jax.ShapeDtypeStruct((4,), jnp.int32)
  x = jax.ShapeDtypeStruct((1024, 512), jnp.bfloat16)
  w = jax.ShapeDtypeStruct((512, 256), jnp.bfloat16)
  return functools.partial(gather_matmul, chip="v5e"), (rows, x, w), "tpu"
