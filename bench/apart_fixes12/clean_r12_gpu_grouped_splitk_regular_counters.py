"""Grouped split-K reduction epilogue (Mosaic GPU).

The grouped GEMM writes `splits` f32 partial tiles per group; this epilogue folds them. CTA `(g, s)`
scales partial `s` of group `g`; split 0 of each group waits for its group's other splits on a per-group
arrival counter, then folds the partials in order. Counters are global so all CTAs can reach them.
"""
# fix-rate: clean

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class SplitKConfig:
  groups: int
  splits: int
  block_m: int = 64
  block_n: int = 128

  @property
  def counter_type(self):
    # one arrival counter per group: split 0 of group g waits for `splits - 1` arrivals
    return plgpu.SemaphoreType.REGULAR((self.groups,))


CONFIGS = {
    (4, 2): SplitKConfig(groups=4, splits=2),
    (8, 4): SplitKConfig(groups=8, splits=4),
    (2, 8): SplitKConfig(groups=2, splits=8, block_m=32),
}


def _fold_kernel(part_gmem, out_gmem, tile, acc, loaded, *, cfg: SplitKConfig):
  g = jax.lax.axis_index("group")
  s = jax.lax.axis_index("split")
  counters = pl.get_global(cfg.counter_type)

  @pl.when(s != 0)
  def _arrive():
    pl.semaphore_signal(counters.at[g])

  @pl.when(s == 0)
  def _fold():
    pl.semaphore_wait(counters.at[g], cfg.splits - 1)
    acc[...] = jnp.zeros(acc.shape, jnp.float32)
    for j in range(cfg.splits):
      plgpu.copy_gmem_to_smem(part_gmem.at[g, j], tile, loaded)
      plgpu.barrier_wait(loaded)
      acc[...] += tile[...]
    tile[...] = acc[...]
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(tile, out_gmem.at[g])
    plgpu.wait_smem_to_gmem(0)


@jax.jit
def fold_partials(partials: jax.Array) -> jax.Array:
  groups, splits, m, n = partials.shape
  cfg = CONFIGS[(groups, splits)]
  tile = (cfg.block_m, cfg.block_n)
  assert (m, n) == tile, (m, n, tile)
  return plgpu.kernel(
      functools.partial(_fold_kernel, cfg=cfg),
      out_type=jax.ShapeDtypeStruct((groups, m, n), jnp.float32),
      scratch_types=[plgpu.SMEM(tile, jnp.float32), plgpu.SMEM(tile, jnp.float32),
                     plgpu.Barrier(num_arrivals=1)],
      grid=(groups, splits),
      grid_names=("group", "split"),
  )(partials)


def target():
  return fold_partials, (jax.ShapeDtypeStruct((8, 4, 64, 128), jnp.float32),), "cuda"
