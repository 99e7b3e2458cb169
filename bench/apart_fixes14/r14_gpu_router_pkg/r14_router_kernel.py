"""Mosaic GPU body: sigmoid router scores with an aux-loss-free selection bias (DeepSeek-V3 style)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

TOKEN_AXIS = "tok"


def router_scores_body(logits_ref, bias_ref, scores_ref, select_ref, *, block: int, inv_temp: float):
  t = jax.lax.axis_index(TOKEN_AXIS)
  span = pl.ds(t * block, block)
  probs = pl.get_global(plgpu.SMEM((block,), jnp.float32))
  probs[...] = jax.nn.sigmoid(logits_ref[span].astype(jnp.float32) * inv_temp)
  scores_ref[span] = probs[...].astype(scores_ref.dtype)
  select_ref[span] = (probs[...] + bias_ref[span].astype(jnp.float32)).astype(select_ref.dtype)
