"""Staging tiles shared by this package's Mosaic GPU kernels."""
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def staging_tile(rows: int, cols: int):
    """A float32 tile of shared memory for one block's rows."""
    return pl.get_global(plgpu.SMEM((rows, cols), jnp.float32))
