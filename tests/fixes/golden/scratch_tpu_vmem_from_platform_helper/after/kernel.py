"""The TPU path: its pallas_call's staging buffer type comes from a helper shared with a GPU path, which returns
pltpu.VMEM for "tpu" (the branch taken for this argument). The launch is a TPU one, not Triton, and the buffer
becomes TPU scratch as written."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

from platform_staging import staging_buffer

ROWS, COLS = 8, 128


def shift(x_ref, y_ref, buf_ref):
  buf_ref[...] = x_ref[...] - 1.0
  y_ref[...] = buf_ref[...]


def target():
  tile = jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32)
  return pl.pallas_call(
    shift, out_shape=tile, scratch_shapes=[staging_buffer("tpu", ROWS, COLS)]
  ), (tile,), "tpu"
