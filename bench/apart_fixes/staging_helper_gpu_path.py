"""GPU path of a kernel whose staging buffer type comes from a helper shared with the TPU path."""
# fix-rate: kind=scratch meaning=preserving

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

from helpers.staging import staging_buffer

ROWS, COLS = 2, 128


def shift_gpu(x_ref, y_ref):
  buf = pl.get_global(staging_buffer("gpu", ROWS, COLS))
  buf[...] = x_ref[...] - 1.0
  y_ref[...] = buf[...]


def target():
  flat = jax.ShapeDtypeStruct((ROWS * COLS,), jnp.float32)
  return plgpu.kernel(shift_gpu, out_type=flat), (flat,), "cuda"
