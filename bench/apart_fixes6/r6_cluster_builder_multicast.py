"""Cluster-wide block scaling, built with a small fluent kernel builder.

Each CTA of a 2-CTA cluster loads its half of a block into shared memory, scales it, then all CTAs of
the cluster meet on a cluster barrier before any of them writes back (the consumer of this op reads
the halves as one tile, so no CTA may run ahead of its peer).  Kernels of this family are assembled with
`ClusterKernelBuilder`, whose methods return the builder so a launch reads as one chained expression.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

# fix-rate: kind=barrier_scratch meaning=preserving

CLUSTER_AXIS = "cta"


class ClusterKernelBuilder:
  """Collects the launch parameters of a clustered `plgpu.kernel`."""

  def __init__(self, body):
    self._body = body
    self._cluster = 1
    self._grid = (1,)
    self._scratch: list = []
    self._out = None

  def with_cluster(self, size: int) -> "ClusterKernelBuilder":
    self._cluster = size
    return self

  def with_grid(self, *grid: int) -> "ClusterKernelBuilder":
    self._grid = tuple(grid)
    return self

  def with_scratch(self, *types) -> "ClusterKernelBuilder":
    self._scratch.extend(types)
    return self

  def returning(self, out) -> "ClusterKernelBuilder":
    self._out = out
    return self

  def build(self):
    return plgpu.kernel(
        self._body,
        out_type=self._out,
        grid=self._grid,
        grid_names=("blocks",),
        cluster=(self._cluster,),
        cluster_names=(CLUSTER_AXIS,),
        scratch_types=self._scratch,
    )


def _scale_body(x_gmem, o_gmem, tile_smem, loaded, *, scale: float):
  cta = jax.lax.axis_index(CLUSTER_AXIS)
  block = jax.lax.axis_index("blocks")
  # Every CTA of the cluster arrives once; nobody writes back before the whole cluster scaled.
  cluster_done = pl.get_global(plgpu.ClusterBarrier(collective_axes=(CLUSTER_AXIS,)))

  plgpu.copy_gmem_to_smem(x_gmem.at[block, cta], tile_smem, loaded)
  plgpu.barrier_wait(loaded)
  tile_smem[...] = (tile_smem[...].astype(jnp.float32) * scale).astype(tile_smem.dtype)
  plgpu.commit_smem()

  plgpu.barrier_arrive(cluster_done)
  plgpu.barrier_wait(cluster_done)
  plgpu.copy_smem_to_gmem(tile_smem, o_gmem.at[block, cta])
  plgpu.wait_smem_to_gmem(0)


def cluster_scale(x: jax.Array, scale: float = 0.5, cluster: int = 2) -> jax.Array:
  """x: (blocks, cluster, rows, cols); each (rows, cols) half is scaled by one CTA."""
  blocks, halves, rows, cols = x.shape
  if halves != cluster:
    raise ValueError(f"second axis {halves} must equal the cluster size {cluster}")
  return (
      ClusterKernelBuilder(functools.partial(_scale_body, scale=scale))
      .with_cluster(cluster)
      .with_grid(blocks)
      .with_scratch(plgpu.SMEM((rows, cols), x.dtype), plgpu.Barrier(num_arrivals=1))
      .returning(jax.ShapeDtypeStruct(x.shape, x.dtype))
      .build()
  )(x)


def target():
  return cluster_scale, (jax.ShapeDtypeStruct((4, 2, 64, 128), jnp.float16),), "cuda"


if __name__ == "__main__":
  x = jnp.ones((4, 2, 64, 128), jnp.float16)
  print(cluster_scale(x).sum())
