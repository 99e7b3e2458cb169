"""Router logit post-processing kernel: z-loss scaled, softcapped logits (Mosaic GPU)."""

import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

import r13_router_tiles as tiles


def _router_body(cap, x_ref, o_ref):
  logits = pl.get_global(tiles.LOGIT_TILE.smem())
  i = lax.axis_index("blocks")
  sl = pl.ds(i * tiles.ROUTER_BLOCK, tiles.ROUTER_BLOCK)
  logits[...] = x_ref[sl].astype(jnp.float32)
  logits[...] = jnp.tanh(logits[...] / cap) * cap
  o_ref[sl] = logits[...].astype(o_ref.dtype)


def router_logits_kernel(n: int, dtype, cap: float):
  return plgpu.kernel(
      functools.partial(_router_body, cap),
      out_type=jax.ShapeDtypeStruct((n,), dtype),
      grid=(n // tiles.ROUTER_BLOCK,),
      grid_names=("blocks",),
  )
