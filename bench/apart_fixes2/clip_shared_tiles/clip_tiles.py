"""Tile buffers shared by the GPU and the TPU clip kernels of this folder."""

import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu


def tile_buffer(backend: str, rows: int, cols: int, dtype=jnp.float32):
  """The on-chip tile one block of the input is staged in: VMEM on TPU, shared memory on GPU."""
  if backend == "tpu":
    return pltpu.VMEM((rows, cols), dtype)
  return plgpu.SMEM((rows * cols,), dtype)


def clip_value(backend: str) -> float:
  return 6.0 if backend == "tpu" else 6.0
