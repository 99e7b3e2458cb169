"""Per-head query scaling split across two warpgroups, staging through shared memory (Mosaic GPU).

One grid block per head; inside a block the two warpgroups (``wg``) share one TMA-staged tile:
warpgroup 0 issues the copy, both wait on the barrier, and each scales and stores its half of
the rows. The tile and barrier are shared by the warpgroups of a block, so they are allocated
with ``pl.run_scoped(..., collective_axes="wg")``.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

# fix-rate: clean

HEAD_AXIS = "heads"
THREAD_AXIS = "wg"
NUM_WARPGROUPS = 2


def _stage_and_scale(q_head, o_head, scale):
  rows_per_wg = q_head.shape[0] // NUM_WARPGROUPS

  def staged(tile, loaded):
    wg = jax.lax.axis_index(THREAD_AXIS)

    @pl.when(wg == 0)
    def _issue():
      plgpu.copy_gmem_to_smem(q_head, tile, loaded)

    plgpu.barrier_wait(loaded)
    mine = pl.ds(wg * rows_per_wg, rows_per_wg)
    o_head[mine, :] = tile[mine, :] * scale

  pl.run_scoped(
      staged,
      plgpu.SMEM(q_head.shape, jnp.float32),
      plgpu.Barrier(num_arrivals=1),
      collective_axes=THREAD_AXIS,
  )


def _scale_queries_body(q_ref, o_ref):
  head = jax.lax.axis_index(HEAD_AXIS)
  _stage_and_scale(q_ref.at[head], o_ref.at[head], 1.0 / math.sqrt(q_ref.shape[-1]))


def scale_queries(q: jax.Array) -> jax.Array:
  """``q``: [heads, seq, head_dim] f32."""
  return plgpu.kernel(
      _scale_queries_body,
      out_type=jax.ShapeDtypeStruct(q.shape, q.dtype),
      grid=(q.shape[0],),
      grid_names=(HEAD_AXIS,),
      num_threads=NUM_WARPGROUPS,
      thread_name=THREAD_AXIS,
  )(q)


def target():
  return scale_queries, (jax.ShapeDtypeStruct((4, 128, 128), jnp.float32),), "cuda"


def scale_queries_reference(q):
  return q / math.sqrt(q.shape[-1])


def attention_prologue(q: jax.Array, k: jax.Array) -> tuple[jax.Array, jax.Array]:
  """Scales the queries in the kernel; the keys pass through (they are scaled nowhere)."""
  if q.shape != k.shape:
    raise ValueError(f"q {q.shape} and k {k.shape} differ")
  if q.shape[1] % NUM_WARPGROUPS:
    raise ValueError(f"seq {q.shape[1]} must split across {NUM_WARPGROUPS} warpgroups")
  return scale_queries(q), k


if __name__ == "__main__":
  q = jax.random.normal(jax.random.key(0), (4, 128, 128), jnp.float32)
  scaled, _ = attention_prologue(q, q)
  print(float(jnp.max(jnp.abs(scaled - scale_queries_reference(q)))))
