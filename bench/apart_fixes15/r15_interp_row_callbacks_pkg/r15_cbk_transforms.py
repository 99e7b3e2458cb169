"""Row transforms plugged into the generic row kernel, typed by a Protocol.

A transform reads one row block from `x_ref` and writes `o_ref`; it may keep intermediate
values in VMEM.
"""

from typing import Protocol

import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


class RowTransform(Protocol):
  name: str

  def __call__(self, x_ref, o_ref) -> None:
    ...


class Clip:
  name = "clip"

  def __init__(self, bound: float):
    self.bound = bound

  def __call__(self, x_ref, o_ref):
    o_ref[...] = jnp.clip(x_ref[...], -self.bound, self.bound)


class CenterAndGate:
  """x - mean(x) where positive, else 0: the gate of the research variant."""

  name = "center_gate"

  def __init__(self, block_rows: int, width: int):
    self.block_rows = block_rows
    self.width = width

  def __call__(self, x_ref, o_ref):
    centered = pl.get_global(pltpu.VMEM((self.block_rows, self.width), jnp.float32))
    x = x_ref[...]
    centered[...] = x - jnp.mean(x, axis=1, keepdims=True)
    o_ref[...] = jnp.maximum(centered[...], 0.0)
