"""Working buffers of the pooling kernels.

Grew out of the GPU version of the library, where every kernel asked for its
shared-memory buffers through this one helper.
"""
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def scratch(shape, dtype=jnp.float32):
  return pl.get_global(pltpu.VMEM(shape, dtype))
