"""Logit soft-capping stage of a flash-attention forward pass (Mosaic GPU).

The score tile ``s = q * k * sm_scale`` is capped with ``cap * tanh(s / cap)`` before the
softmax, as Gemma-style models do. The kernel was ported from the TPU implementation of the
same stage; its ``FlashConfig`` still describes the f32 staging tile the way the TPU version
allocated it.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

# fix-rate: kind=smem_type meaning=preserving


@dataclasses.dataclass(frozen=True)
class FlashConfig:
  """Tiling of the query axis and the soft cap, shared by the forward and backward stages."""

  block_q: int = 64
  head_dim: int = 128
  sm_scale: float = 0.125
  logit_cap: float = 30.0

  def __post_init__(self):
    if self.head_dim % 128:
      raise ValueError(f"head_dim must be a multiple of 128, got {self.head_dim}")

  def num_q_blocks(self, seq_len: int) -> int:
    if seq_len % self.block_q:
      raise ValueError(f"seq_len {seq_len} is not a multiple of block_q {self.block_q}")
    return seq_len // self.block_q

  def scratch_types(self):
    """The f32 score tile the capped logits are staged in before the store."""
    return [pltpu.VMEM((self.block_q, self.head_dim), jnp.float32)]


DEFAULT_CONFIGS = {
    128: FlashConfig(block_q=64, head_dim=128),
    256: FlashConfig(block_q=64, head_dim=256),
}


def _softcap_body(q_ref, k_ref, o_ref, scores_ref, *, cfg: FlashConfig):
  block = jax.lax.axis_index("q_blocks")
  rows = pl.ds(block * cfg.block_q, cfg.block_q)
  q = q_ref[rows, :].astype(jnp.float32)
  k = k_ref[rows, :].astype(jnp.float32)
  scores_ref[...] = q * k * cfg.sm_scale
  capped = cfg.logit_cap * jnp.tanh(scores_ref[...] / cfg.logit_cap)
  o_ref[rows, :] = capped.astype(o_ref.dtype)


def capped_scores(q: jax.Array, k: jax.Array, cfg: FlashConfig | None = None) -> jax.Array:
  """Soft-capped, scaled elementwise scores of ``q`` and ``k`` (``[seq, head_dim]``)."""
  cfg = cfg or DEFAULT_CONFIGS[q.shape[-1]]
  body = functools.partial(_softcap_body, cfg=cfg)
  return plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct(q.shape, q.dtype),
      scratch_types=cfg.scratch_types(),
      grid=(cfg.num_q_blocks(q.shape[0]),),
      grid_names=("q_blocks",),
  )(q, k)


def reference(q, k, cfg: FlashConfig):
  s = q.astype(jnp.float32) * k.astype(jnp.float32) * cfg.sm_scale
  return (cfg.logit_cap * jnp.tanh(s / cfg.logit_cap)).astype(q.dtype)


def target():
  spec = jax.ShapeDtypeStruct((256, 128), jnp.bfloat16)
  return capped_scores, (spec, spec), "cuda"


if __name__ == "__main__":
  q = jax.random.normal(jax.random.key(0), (256, 128), jnp.bfloat16)
  k = jax.random.normal(jax.random.key(1), (256, 128), jnp.bfloat16)
  out = capped_scores(q, k)
  print(jnp.max(jnp.abs(out.astype(jnp.float32) - reference(q, k, DEFAULT_CONFIGS[128]).astype(jnp.float32))))
