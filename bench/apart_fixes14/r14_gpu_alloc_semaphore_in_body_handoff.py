"""Two-block handoff for a chunked cumulative sum (Mosaic GPU).

Block 1 needs the carry written by block 0. The carry flag was switched to
`plgpu.alloc_semaphore()` when the library picked up jax 0.12's persistent
semaphores.
"""
# fix-rate: kind=get_global meaning=preserving

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


class ChunkPlan(NamedTuple):
  chunk: int = 128
  chunks: int = 2

  @property
  def length(self) -> int:
    return self.chunk * self.chunks


def _chunk_scale_body(x_ref, carry_ref, o_ref, *, plan: ChunkPlan):
  c = jax.lax.axis_index("chunk")
  span = pl.ds(c * plan.chunk, plan.chunk)
  carry_ready = plgpu.alloc_semaphore()

  @pl.when(c == 0)
  def _first():
    carry_ref[...] = x_ref[span]
    o_ref[span] = x_ref[span]
    pl.semaphore_signal(carry_ready, 1)

  @pl.when(c == 1)
  def _second():
    pl.semaphore_wait(carry_ready, 1)
    o_ref[span] = x_ref[span] + carry_ref[...]


@functools.lru_cache(maxsize=8)
def make_chunk_kernel(plan: ChunkPlan, dtype_name: str):
  dtype = jnp.dtype(dtype_name)
  return plgpu.kernel(
      functools.partial(_chunk_scale_body, plan=plan),
      out_type=(
          jax.ShapeDtypeStruct((plan.chunk,), dtype),
          jax.ShapeDtypeStruct((plan.length,), dtype),
      ),
      grid=(plan.chunks,),
      grid_names=("chunk",),
  )


@jax.jit
def chunked_carry_add(x: jax.Array) -> jax.Array:
  _, out = make_chunk_kernel(ChunkPlan(), x.dtype.name)(x)
  return out


def target():
  return chunked_carry_add, (jax.ShapeDtypeStruct((ChunkPlan().length,), jnp.float32),), "cuda"


if __name__ == "__main__":
  print(chunked_carry_add(jnp.arange(256, dtype=jnp.float32))[126:130])
