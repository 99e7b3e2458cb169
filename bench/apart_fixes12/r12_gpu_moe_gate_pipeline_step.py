"""Fused MoE router epilogue for Hopper (Mosaic GPU): softcapped gate logits, pipelined over tokens.

The expert gate is `tanh(logits / cap) * cap` followed by a bias add, computed on tiles of
`(block_tokens, num_experts)` streamed through `plgpu.emit_pipeline`. Tile sizes come from a tuning
table keyed by `(dtype, (tokens, experts))`; anything not in the table uses `get_default_config()`.
"""
# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class KernelConfig:
  block_tokens: int
  max_concurrent_steps: int = 2
  softcap: float = 30.0


TUNED_CONFIGS: dict[tuple[str, tuple[int, int]], KernelConfig] = {
    ("bfloat16", (2048, 128)): KernelConfig(block_tokens=64, max_concurrent_steps=2),
    ("bfloat16", (4096, 128)): KernelConfig(block_tokens=64, max_concurrent_steps=3),
    ("float16", (1024, 64)): KernelConfig(block_tokens=64),
}


def get_default_config(dtype, tokens: int, experts: int) -> KernelConfig:
  del experts
  block = 128 if tokens % 128 == 0 else 64
  if jnp.dtype(dtype).itemsize == 4:
    block //= 2
  return KernelConfig(block_tokens=block)


def get_tuned_config(dtype, tokens: int, experts: int) -> KernelConfig:
  key = (jnp.dtype(dtype).name, (tokens, experts))
  return TUNED_CONFIGS.get(key) or get_default_config(dtype, tokens, experts)


def _gate_kernel(logits_gmem, bias_gmem, out_gmem, *, cfg: KernelConfig):
  tokens, experts = logits_gmem.shape
  num_steps = tokens // cfg.block_tokens

  def step(_, logits_smem, bias_smem, out_smem):
    staged = pl.get_global(plgpu.SMEM((cfg.block_tokens, experts), jnp.float32))
    staged[...] = logits_smem[...].astype(jnp.float32) / cfg.softcap
    capped = jnp.tanh(staged[...]) * cfg.softcap
    out_smem[...] = (capped + bias_smem[...].astype(jnp.float32)).astype(out_smem.dtype)

  tile = pl.BlockSpec((cfg.block_tokens, experts), lambda i: (i, 0))
  plgpu.emit_pipeline(
      step,
      grid=(num_steps,),
      in_specs=[tile, tile],
      out_specs=[tile],
      max_concurrent_steps=cfg.max_concurrent_steps,
  )(logits_gmem, bias_gmem, out_gmem)


@functools.partial(jax.jit, static_argnames=("cfg",))
def moe_gate(logits: jax.Array, bias: jax.Array, cfg: KernelConfig | None = None) -> jax.Array:
  tokens, experts = logits.shape
  cfg = cfg or get_tuned_config(logits.dtype, tokens, experts)
  if tokens % cfg.block_tokens:
    raise ValueError(f"{tokens=} is not a multiple of {cfg.block_tokens=}")
  kernel = plgpu.kernel(
      functools.partial(_gate_kernel, cfg=cfg),
      out_type=jax.ShapeDtypeStruct(logits.shape, logits.dtype),
  )
  return kernel(logits, bias)


def reference(logits, bias, softcap=30.0):
  x = logits.astype(jnp.float32)
  return (jnp.tanh(x / softcap) * softcap + bias.astype(jnp.float32)).astype(logits.dtype)


def target():
  spec = jax.ShapeDtypeStruct((2048, 128), jnp.bfloat16)
  return moe_gate, (spec, spec), "cuda"
