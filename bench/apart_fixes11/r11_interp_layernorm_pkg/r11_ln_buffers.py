"""Buffer types of the layernorm kernels, module constants shared by kernel and tests."""

import jax.numpy as jnp
from jax.experimental.pallas import tpu as pltpu

ROWS = 8
WIDTH = 128
# The centred block, widened to f32 (the variance is taken from it).
CENTERED = pltpu.VMEM((ROWS, WIDTH), jnp.float32)
EPS = 1e-5
