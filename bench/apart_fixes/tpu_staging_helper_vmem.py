"""TPU path of the shift kernel; its staging buffer type comes from the helper shared with the GPU path."""
# fix-rate: kind=scratch meaning=preserving

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

from helpers.staging import staging_buffer

ROWS, COLS = 8, 128


def shift_tpu(x_ref, y_ref):
  buf = pl.get_global(staging_buffer("tpu", ROWS, COLS))
  buf[...] = x_ref[...] - 1.0
  y_ref[...] = buf[...]


def target():
  tile = jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32)
  return pl.pallas_call(shift_tpu, out_shape=tile), (tile,), "tpu"
