"""Staging-buffer types shared by the TPU and the GPU paths of the kernels."""
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu


def staging_buffer(platform, rows, cols):
  if platform == "tpu":
    return pltpu.VMEM((rows, cols), jnp.float32)
  return plgpu.SMEM((rows * cols,), jnp.float32)
