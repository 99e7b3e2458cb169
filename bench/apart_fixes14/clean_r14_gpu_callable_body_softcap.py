"""Attention-logit soft-capping as a callable body object (Mosaic GPU).

`SoftcapBody` instances are handed to `plgpu.kernel` directly: the object is the
kernel body, configured once per model and reused across launches.
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
class SoftcapConfig:
  block: int = 256
  cap: float = 50.0
  compute_dtype: str = "float32"

  @property
  def compute_tile(self) -> plgpu.SMEM:
    return plgpu.SMEM((self.block,), jnp.dtype(self.compute_dtype))


class SoftcapBody:
  """Kernel body: logits -> cap * tanh(logits / cap), per block of the grid."""

  def __init__(self, config: SoftcapConfig):
    self.config = config

  def __repr__(self) -> str:
    return f"SoftcapBody(block={self.config.block}, cap={self.config.cap})"

  def __call__(self, logits_ref, out_ref, tile):
    cfg = self.config
    blk = jax.lax.axis_index("blocks")
    span = pl.ds(blk * cfg.block, cfg.block)
    tile[...] = logits_ref[span].astype(tile.dtype) * (1.0 / cfg.cap)
    out_ref[span] = (jnp.tanh(tile[...]) * cfg.cap).astype(out_ref.dtype)


class SoftcapOp:
  def __init__(self, config: SoftcapConfig):
    self.config = config
    self.body = SoftcapBody(config)

  def __call__(self, logits: jax.Array) -> jax.Array:
    (n,) = logits.shape
    launch = plgpu.kernel(
        self.body,
        out_type=jax.ShapeDtypeStruct(logits.shape, logits.dtype),
        grid=(n // self.config.block,),
        grid_names=("blocks",),
        scratch_types=[self.config.compute_tile],
    )
    return launch(logits)


GEMMA2_SOFTCAP = SoftcapOp(SoftcapConfig(cap=50.0))
GROK_SOFTCAP = SoftcapOp(SoftcapConfig(block=128, cap=30.0))


@jax.jit
def capped_logits(logits: jax.Array) -> jax.Array:
  return GEMMA2_SOFTCAP(logits)


def target():
  return capped_logits, (jax.ShapeDtypeStruct((1024,), jnp.bfloat16),), "cuda"


if __name__ == "__main__":
  x = jnp.linspace(-200, 200, 1024, dtype=jnp.bfloat16)
  print(capped_logits(x)[:4], GROK_SOFTCAP.body)
