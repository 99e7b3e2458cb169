"""Staging-buffer types shared by the TPU and GPU paths of the softplus kernels."""

import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu


def staging_buffer(platform: str, rows: int, cols: int, dtype=jnp.float32):
  if platform == "tpu":
    return pltpu.VMEM((rows, cols), dtype)
  return plgpu.SMEM((rows * cols,), dtype)


def tpu_flag():
  return pltpu.SemaphoreType.REGULAR
