"""Buffer types shared by the GPU and the TPU path of the layer."""
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu


def staging_type(width, dtype=jnp.float32, backend="gpu"):
    if backend == "tpu":
        return pltpu.VMEM((8, width), dtype)
    return plgpu.SMEM((width,), dtype)
