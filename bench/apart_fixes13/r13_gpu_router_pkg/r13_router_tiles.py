"""Tile descriptions shared by the router kernels (Mosaic GPU)."""

import dataclasses

import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class TileScratch:
  """One SMEM tile a router kernel stages through."""
  block: int
  dtype: jnp.dtype = jnp.float32

  def smem(self):
    return plgpu.SMEM((self.block,), self.dtype)


ROUTER_BLOCK = 128
LOGIT_TILE = TileScratch(ROUTER_BLOCK)
