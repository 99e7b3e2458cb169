"""Allocation types of the project's kernel library."""
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

STAGING = plgpu.SMEM((128,), jnp.float32)
