"""Pallas TPU kernel: symmetric int8 quantization of KV-cache rows, one row block per step."""

from __future__ import annotations

import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


class KVQuantKernel:
  """Quantizes a (block_rows, head_dim) tile; the scale is absmax / 127 per row."""

  def __init__(self, block_rows: int, head_dim: int):
    self.block_rows = block_rows
    self.head_dim = head_dim

  def widened(self):
    return pl.get_global(pltpu.VMEM((self.block_rows, self.head_dim), jnp.float32))

  def __call__(self, kv_ref, q_ref, scale_ref):
    wide = self.widened()
    wide[...] = kv_ref[...].astype(jnp.float32)
    absmax = jnp.max(jnp.abs(wide[...]), axis=1, keepdims=True)
    scale = jnp.maximum(absmax, 1e-6) / 127.0
    q_ref[...] = jnp.round(wide[...] / scale).astype(jnp.int8)
    scale_ref[...] = jnp.broadcast_to(scale, scale_ref.shape)
