"""Helpers shared by the activation kernels of this package (Mosaic GPU)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

BLOCK_ROWS = 64


def row_block(axis_name="rows"):
  i = jax.lax.axis_index(axis_name)
  return pl.ds(i * BLOCK_ROWS, BLOCK_ROWS)


def stage(shape, dtype=jnp.float32):
  """An f32 working tile in shared memory for the current block."""
  return pl.get_global(plgpu.SMEM(shape, dtype))
