"""Tiling parameters of the fused RMSNorm, one NamedTuple per hidden size."""

from typing import NamedTuple

import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


class RmsTiling(NamedTuple):
  block_rows: int
  hidden: int
  stats_dtype: jnp.dtype = jnp.float32

  def normed_tile(self):
    """f32 tile that holds x * rsqrt(mean(x^2)) before the weight is applied."""
    return plgpu.SMEM((self.block_rows, self.hidden), self.stats_dtype)


TILINGS = {
    128: RmsTiling(block_rows=64, hidden=128),
    256: RmsTiling(block_rows=64, hidden=256),
}


def tiling_for(hidden: int) -> RmsTiling:
  try:
    return TILINGS[hidden]
  except KeyError:
    raise ValueError(f"no RMSNorm tiling for hidden={hidden}") from None
