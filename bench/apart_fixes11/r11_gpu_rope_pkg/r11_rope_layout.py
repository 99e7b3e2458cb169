"""Shared-memory layout of the rotary-embedding kernels (one place for every tile size).

Kernels import these constants so the staging tiles and TMA barriers stay in sync with the
tile size the tuner picked.
"""

import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

HEAD_DIM = 256
HALF = HEAD_DIM // 2

# f32 staging for the rotated halves; bf16 rotations drift after a few thousand positions.
ROTATED_HALF = plgpu.SMEM((HALF,), jnp.float32)
# The cos/sin table row is TMA-loaded once per head.
TABLE_ROW = plgpu.SMEM((HEAD_DIM,), jnp.float32)
TABLE_READY = plgpu.Barrier(num_arrivals=1)
