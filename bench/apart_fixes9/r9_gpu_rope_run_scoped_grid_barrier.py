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


def scale_queries_reference(q, temperature):
  return q * (temperature / math.sqrt(q.shape[-1]))


def per_head_temperature(num_heads: int, seq: int, head_dim: int, init: float = 1.0) -> jax.Array:
  """Learned temperatures start at ``init`` and are broadcast over the head's tile."""
  t = jnp.full((num_heads, 1, 1), init, jnp.float32)
  return jnp.broadcast_to(t, (num_heads, seq, head_dim))


class QueryScaler:
  """Holds the temperatures of one attention layer and applies them to its queries."""

  def __init__(self, num_heads: int, seq: int, head_dim: int):
    self.temperature = per_head_temperature(num_heads, seq, head_dim)

  def __call__(self, q):
    if q.shape != self.temperature.shape:
      raise ValueError(f"queries {q.shape} do not match temperatures {self.temperature.shape}")
    return scale_queries(q, self.temperature)


if __name__ == "__main__":
  q = jax.random.normal(jax.random.key(0), (4, 64, 128), jnp.float32)
  scaler = QueryScaler(4, 64, 128)
  print(float(jnp.max(jnp.abs(scaler(q) - scale_queries_reference(q, scaler.temperature)))))
