"""Blocked matrix-vector product on TPU with a K-loop accumulator, tiles from a tuning table.

The f32 accumulator lives across the K steps of one output block.
"""
# fix-rate: clean

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class MatvecBlocks:
  block_m: int
  block_k: int

  def grid(self, m: int, k: int) -> tuple[int, int]:
    return (m // self.block_m, k // self.block_k)


# (m, k) -> blocks; measured on v5e.
_TUNED: dict[tuple[int, int], MatvecBlocks] = {
    (256, 512): MatvecBlocks(block_m=128, block_k=256),
    (1024, 1024): MatvecBlocks(block_m=256, block_k=512),
}
_FALLBACK = MatvecBlocks(block_m=128, block_k=128)


def blocks_for(m: int, k: int) -> MatvecBlocks:
  return _TUNED.get((m, k), _FALLBACK)


def _matvec_kernel(blocks: MatvecBlocks, a_ref, x_ref, o_ref, acc):
  k = pl.program_id(1)

  @pl.when(k == 0)
  def _init():
    acc[...] = jnp.zeros_like(acc)

  acc[...] += jnp.dot(a_ref[...], x_ref[...], preferred_element_type=jnp.float32)

  @pl.when(k == pl.num_programs(1) - 1)
  def _flush():
    o_ref[...] = acc[...].astype(o_ref.dtype)


@jax.jit
def matvec(a: jax.Array, x: jax.Array) -> jax.Array:
  """`a @ x` where `x` is (k, 128): a batch of 128 vectors side by side."""
  m, k = a.shape
  blocks = blocks_for(m, k)
  return pl.pallas_call(
      functools.partial(_matvec_kernel, blocks),
      out_shape=jax.ShapeDtypeStruct((m, 128), a.dtype),
      grid=blocks.grid(m, k),
      in_specs=[
          pl.BlockSpec((blocks.block_m, blocks.block_k), lambda i, kk: (i, kk)),
          pl.BlockSpec((blocks.block_k, 128), lambda i, kk: (kk, 0)),
      ],
      out_specs=pl.BlockSpec((blocks.block_m, 128), lambda i, kk: (i, 0)),
      scratch_shapes=[pltpu.VMEM((blocks.block_m, 128), jnp.float32)],
      compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
  )(a, x)


def target():
  return matvec, (jax.ShapeDtypeStruct((256, 512), jnp.float32),
                  jax.ShapeDtypeStruct((512, 128), jnp.float32)), "tpu"


if __name__ == "__main__":
  a = jnp.ones((256, 512), jnp.float32)
  print(matvec(a, jnp.ones((512, 128), jnp.float32))[0, :4])
