"""Staging tile types shared by this package's Mosaic GPU kernels."""
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def staging_tile(rows: int, cols: int):
    """A float32 tile of shared memory for one block's rows."""
    return plgpu.SMEM((rows, cols), jnp.float32)
