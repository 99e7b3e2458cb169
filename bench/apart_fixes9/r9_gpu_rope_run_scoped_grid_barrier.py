"""Per-head query scaling with a TMA-staged tile, one grid block per head (Mosaic GPU).

Each block copies its head's ``[seq, head_dim]`` slice into shared memory with TMA, scales
it by ``1/sqrt(head_dim)`` times a learned per-head temperature, and writes it out. The tile
and its barrier are allocated with ``pl.run_scoped`` inside the body so that the helper can
be reused by the fused attention prologue.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

# fix-rate: kind=run_scoped_local meaning=preserving

HEAD_AXIS = "heads"


def _stage_and_scale(q_head, t_head, o_head, scale):
  """Stages ``q_head`` through shared memory and writes ``q * scale * temperature``."""

  def staged(tile, loaded):
    plgpu.copy_gmem_to_smem(q_head, tile, loaded)
    plgpu.barrier_wait(loaded)
    o_head[...] = tile[...] * (scale * t_head[...])

  pl.run_scoped(
      staged,
      plgpu.SMEM(q_head.shape, jnp.float32),
      plgpu.Barrier(num_arrivals=1),
      collective_axes=HEAD_AXIS,
  )


def _scale_queries_body(q_ref, temp_ref, o_ref):
  head = jax.lax.axis_index(HEAD_AXIS)
  head_dim = q_ref.shape[-1]
  _stage_and_scale(q_ref.at[head], temp_ref.at[head], o_ref.at[head], 1.0 / math.sqrt(head_dim))


def scale_queries(q: jax.Array, temperature: jax.Array) -> jax.Array:
  """``q``: [heads, seq, head_dim] f32; ``temperature``: [heads, seq, head_dim] (broadcast)."""
  num_heads = q.shape[0]
  return plgpu.kernel(
      _scale_queries_body,
      out_type=jax.ShapeDtypeStruct(q.shape, q.dtype),
      grid=(num_heads,),
      grid_names=(HEAD_AXIS,),
  )(q, temperature)


def target():
  spec = jax.ShapeDtypeStruct((4, 64, 128), jnp.float32)
  return scale_queries, (spec, spec), "cuda"


if __name__ == "__main__":
  q = jax.random.normal(jax.random.key(0), (4, 64, 128), jnp.float32)
  t = jnp.ones_like(q)
  print(scale_queries(q, t)[:, 0, 0])
