"""Tile plan of the scaled residual add; validated once, when the config is built."""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

SMEM_BUDGET_BYTES = 200 * 1024


@dataclasses.dataclass(frozen=True)
class ResidualConfig:
  block_rows: int = 64
  hidden: int = 256
  dtype: object = jnp.bfloat16
  residual_scale: float = 1.0

  def __post_init__(self):
    if self.block_rows % 8:
      raise ValueError(f"block_rows={self.block_rows} must be a multiple of 8")
    if 3 * self.tile_bytes > SMEM_BUDGET_BYTES:
      raise ValueError(f"three {self.tile_bytes}-byte tiles exceed the SMEM budget")

  @property
  def tile_bytes(self) -> int:
    return self.block_rows * self.hidden * jnp.dtype(self.dtype).itemsize

  @property
  def tile_type(self):
    return plgpu.SMEM((self.block_rows, self.hidden), self.dtype)

  @property
  def barrier_types(self) -> tuple:
    """One TMA barrier per loaded operand (the hidden state and the residual branch)."""
    return plgpu.Barrier(num_arrivals=1), plgpu.Barrier(num_arrivals=1)
