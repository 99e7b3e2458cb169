"""Expert weight prefetch for a fused MoE down-projection (Mosaic GPU).

Each CTA owns one expert and pulls its `num_stages` weight chunks into shared memory with one TMA
barrier per chunk, so the scale can start on chunk 0 while chunk 1 is still in flight. The result is
`sum_s chunk_s * scale_s`, written back as one tile per expert.
"""
# fix-rate: kind=barrier_scratch meaning=preserving

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class PrefetchConfig:
  num_stages: int
  rows: int
  cols: int

  def smem_types(self, dtype):
    return [plgpu.SMEM((self.num_stages, self.rows, self.cols), dtype),
            plgpu.SMEM((self.rows, self.cols), jnp.float32)]


TUNING = {
    ("bfloat16", (2, 64, 128)): PrefetchConfig(num_stages=2, rows=64, cols=128),
    ("float32", (2, 64, 128)): PrefetchConfig(num_stages=2, rows=64, cols=128),
    ("bfloat16", (4, 32, 128)): PrefetchConfig(num_stages=4, rows=32, cols=128),
}


def get_default_config(dtype, chunk_shape) -> PrefetchConfig:
  key = (jnp.dtype(dtype).name, tuple(chunk_shape))
  if key in TUNING:
    return TUNING[key]
  stages, rows, cols = chunk_shape
  return PrefetchConfig(num_stages=stages, rows=rows, cols=cols)


def _tma_barriers(cfg: PrefetchConfig):
  return [pl.get_global(plgpu.Barrier(num_arrivals=1)) for _ in range(cfg.num_stages)]


def _prefetch_kernel(w_gmem, scale_gmem, out_gmem, w_smem, acc_smem, *, cfg: PrefetchConfig):
  expert = jax.lax.axis_index("experts")
  barriers = _tma_barriers(cfg)
  for s in range(cfg.num_stages):
    plgpu.copy_gmem_to_smem(w_gmem.at[expert, s], w_smem.at[s], barriers[s])
  acc_smem[...] = jnp.zeros((cfg.rows, cfg.cols), jnp.float32)
  for s in range(cfg.num_stages):
    plgpu.barrier_wait(barriers[s])
    acc_smem[...] += w_smem[s].astype(jnp.float32) * scale_gmem[expert, s]
  w_smem[0] = acc_smem[...].astype(w_smem.dtype)
  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(w_smem.at[0], out_gmem.at[expert])
  plgpu.wait_smem_to_gmem(0)


@jax.jit
def prefetch_and_scale(weights: jax.Array, scales: jax.Array) -> jax.Array:
  experts, stages, rows, cols = weights.shape
  cfg = get_default_config(weights.dtype, (stages, rows, cols))
  return plgpu.kernel(
      functools.partial(_prefetch_kernel, cfg=cfg),
      out_type=jax.ShapeDtypeStruct((experts, rows, cols), weights.dtype),
      scratch_types=cfg.smem_types(weights.dtype),
      grid=(experts,),
      grid_names=("experts",),
  )(weights, scales)


def target():
  w = jax.ShapeDtypeStruct((8, 2, 64, 128), jnp.bfloat16)
  s = jax.ShapeDtypeStruct((8, 2), jnp.float32)
  return prefetch_and_scale, (w, s), "cuda"
