"""Mosaic GPU kernel for the top-k MoE combine: `out = sum_k weight[k] * expert_out[k]`.

Every CTA of the `("k",)` grid scales one expert's tile into an f32 partial; CTA 0 waits for the
others through a global arrival counter and reduces the partials in order (a deterministic sum).
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class CombineConfig:
  top_k: int
  rows: int
  cols: int

  @property
  def tile(self) -> tuple[int, int]:
    return (self.rows, self.cols)

  def scratch_types(self, dtype):
    return [
        plgpu.SMEM(self.tile, dtype),
        plgpu.SMEM(self.tile, jnp.float32),
        plgpu.SMEM(self.tile, jnp.float32),
        plgpu.Barrier(num_arrivals=1, num_barriers=2),
    ]


def combine_kernel(expert_gmem, weight_gmem, out_gmem, io_smem, acc_smem, peer_smem, loaded, *,
                   cfg: CombineConfig):
  k = jax.lax.axis_index("k")
  partials = pl.get_global(plgpu.GMEM((cfg.top_k, *cfg.tile), jnp.float32))
  arrived = pl.get_global(plgpu.SemaphoreType.REGULAR)

  plgpu.copy_gmem_to_smem(expert_gmem.at[k], io_smem, loaded.at[0])
  plgpu.barrier_wait(loaded.at[0])
  acc_smem[...] = io_smem[...].astype(jnp.float32) * weight_gmem[k]

  @pl.when(k != 0)
  def _publish():
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(acc_smem, partials.at[k])
    plgpu.wait_smem_to_gmem(0)
    pl.semaphore_signal(arrived)

  @pl.when(k == 0)
  def _reduce():
    pl.semaphore_wait(arrived, cfg.top_k - 1)
    for j in range(1, cfg.top_k):
      plgpu.copy_gmem_to_smem(partials.at[j], peer_smem, loaded.at[1])
      plgpu.barrier_wait(loaded.at[1])
      acc_smem[...] += peer_smem[...]
    io_smem[...] = acc_smem[...].astype(io_smem.dtype)
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(io_smem, out_gmem)
    plgpu.wait_smem_to_gmem(0)


def build_combine(cfg: CombineConfig, dtype):
  return plgpu.kernel(
      functools.partial(combine_kernel, cfg=cfg),
      out_type=jax.ShapeDtypeStruct(cfg.tile, dtype),
      scratch_types=cfg.scratch_types(dtype),
      grid=(cfg.top_k,),
      grid_names=("k",),
  )
