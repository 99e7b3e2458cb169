"""QK-norm scaling for Hopper attention prologues (Mosaic GPU).

Queries and keys are scaled per head dimension in f32 and written back in the model dtype. The f32
staging buffers are described once, as a pytree of types, by `QKNormConfig.staging_types()` so that the
attention kernel and this prologue agree on their layout.
"""
# fix-rate: clean

from __future__ import annotations

import dataclasses
import functools
from typing import Mapping

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class QKNormConfig:
  block_q: int = 64
  head_dim: int = 128
  max_concurrent_steps: int = 2

  def staging_types(self) -> Mapping[str, plgpu.SMEM]:
    tile = (self.block_q, self.head_dim)
    return {"q32": plgpu.SMEM(tile, jnp.float32), "k32": plgpu.SMEM(tile, jnp.float32)}


_CONFIGS = {
    (jnp.dtype("bfloat16"), 128): QKNormConfig(block_q=32, head_dim=128),
    (jnp.dtype("bfloat16"), 64): QKNormConfig(block_q=64, head_dim=64),
    (jnp.dtype("float16"), 128): QKNormConfig(block_q=32, head_dim=128, max_concurrent_steps=3),
}


def get_default_config(dtype, head_dim: int) -> QKNormConfig:
  return _CONFIGS.get((jnp.dtype(dtype), head_dim), QKNormConfig(head_dim=head_dim))


def _qk_norm_kernel(q_gmem, k_gmem, qs_gmem, ks_gmem, qo_gmem, ko_gmem, *, cfg: QKNormConfig, **staging):
  seq = q_gmem.shape[0]

  def step(_, q_smem, k_smem, qs_smem, ks_smem, qo_smem, ko_smem):
    staging["q32"][...] = q_smem[...].astype(jnp.float32) * qs_smem[...].astype(jnp.float32)
    staging["k32"][...] = k_smem[...].astype(jnp.float32) * ks_smem[...].astype(jnp.float32)
    qo_smem[...] = staging["q32"][...].astype(qo_smem.dtype)
    ko_smem[...] = staging["k32"][...].astype(ko_smem.dtype)

  specs = [pl.BlockSpec((cfg.block_q, cfg.head_dim), lambda i: (i, 0)) for _ in range(4)]
  plgpu.emit_pipeline(
      step,
      grid=(seq // cfg.block_q,),
      in_specs=specs,
      out_specs=specs[:2],
      max_concurrent_steps=cfg.max_concurrent_steps,
  )(q_gmem, k_gmem, qs_gmem, ks_gmem, qo_gmem, ko_gmem)


@functools.partial(jax.jit, static_argnames=("cfg",))
def qk_norm(q, k, q_scale, k_scale, cfg: QKNormConfig | None = None):
  cfg = cfg or get_default_config(q.dtype, q.shape[-1])
  out = jax.ShapeDtypeStruct(q.shape, q.dtype)
  return plgpu.kernel(
      functools.partial(_qk_norm_kernel, cfg=cfg),
      out_type=(out, out),
      scratch_types=cfg.staging_types(),
  )(q, k, q_scale, k_scale)


def reference(q, k, q_scale, k_scale):
  f32 = jnp.float32
  return ((q.astype(f32) * q_scale.astype(f32)).astype(q.dtype),
          (k.astype(f32) * k_scale.astype(f32)).astype(k.dtype))


def target():
  spec = jax.ShapeDtypeStruct((1024, 128), jnp.bfloat16)
  return qk_norm, (spec, spec, spec, spec), "cuda"
