"""Mosaic GPU SwiGLU forward: silu(gate) * up, one CTA per block of the hidden dim."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def _swiglu_body(gate_ref, up_ref, out_ref, *, block: int):
  b = jax.lax.axis_index("blocks")
  span = pl.ds(b * block, block)
  acc = pl.get_global(plgpu.SMEM((block,), jnp.float32))
  g = gate_ref[span].astype(jnp.float32)
  acc[...] = g * jax.nn.sigmoid(g)
  acc[...] *= up_ref[span].astype(jnp.float32)
  out_ref[span] = acc[...].astype(out_ref.dtype)


def swiglu_fwd_gpu(gate: jax.Array, up: jax.Array, block: int) -> jax.Array:
  (n,) = gate.shape
  return plgpu.kernel(
      functools.partial(_swiglu_body, block=block),
      out_type=jax.ShapeDtypeStruct(gate.shape, gate.dtype),
      grid=(n // block,),
      grid_names=("blocks",),
  )(gate, up)
