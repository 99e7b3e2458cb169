"""A TPU pallas_call whose staging buffer type comes from a helper shared with a GPU path: the helper returns
pltpu.VMEM for "tpu" (the branch taken for this argument), so the launch is a TPU one, not Triton, and the buffer
becomes TPU scratch as written."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

ROWS, COLS = 8, 128


def staging_buffer(platform, rows, cols):
  if platform == "tpu":
    return pltpu.VMEM((rows, cols), jnp.float32)
  return plgpu.SMEM((rows * cols,), jnp.float32)


def shift(x_ref, y_ref, buf_ref):
  buf_ref[...] = x_ref[...] - 1.0
  y_ref[...] = buf_ref[...]


def target():
  tile = jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32)
  return pl.pallas_call(
    shift, out_shape=tile, scratch_shapes=[staging_buffer("tpu", ROWS, COLS)]
  ), (tile,), "tpu"
