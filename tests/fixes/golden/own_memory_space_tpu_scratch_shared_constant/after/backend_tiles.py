"""Tile types shared by the kernels of both backends."""
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

ACC_TILE = plgpu.SMEM((8, 128), jnp.float32)
