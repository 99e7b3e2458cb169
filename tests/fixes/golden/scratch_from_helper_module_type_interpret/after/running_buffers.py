import jax.numpy as jnp
from jax.experimental.pallas import tpu as pltpu


def running_max(rows, cols):
    return pltpu.VMEM((rows, cols), jnp.float32)
