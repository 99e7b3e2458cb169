"""A helper two kernels share: it returns the get_global of a buffer whose type its arguments shape."""
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def staging_buffer(n, dtype=jnp.float32):
    return plgpu.SMEM((n,), dtype)
