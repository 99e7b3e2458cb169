"""Workspace bookkeeping for the centering kernels: what VMEM each block needs."""

import dataclasses

import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class Workspace:
  block_rows: int
  cols: int

  def types(self):
    """The f32 centered block."""
    return [pltpu.VMEM((self.block_rows, self.cols), jnp.float32)]

  def alloc(self):
    return list(map(pl.get_global, self.types()))

  @property
  def bytes(self) -> int:
    return self.block_rows * self.cols * 4
