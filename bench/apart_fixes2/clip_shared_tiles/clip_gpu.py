"""The Mosaic GPU clip kernel (ReLU6): stages its rows in the shared tile helper's buffer.

The tile type comes from `clip_tiles.tile_buffer`, which the TPU kernel beside this file also uses.
"""
# fix-rate: kind=scratch meaning=preserving

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

import clip_tiles

ROWS, COLS = 2, 128


def clip_gpu_body(x_ref, o_ref):
  tile = pl.get_global(clip_tiles.tile_buffer("gpu", ROWS, COLS))
  tile[...] = x_ref[...]
  o_ref[...] = jnp.clip(tile[...], 0.0, clip_tiles.clip_value("gpu"))


def clip_gpu(x):
  out = jax.ShapeDtypeStruct((ROWS * COLS,), jnp.float32)
  return plgpu.kernel(clip_gpu_body, out_type=out)(x)


def target():
  return clip_gpu, (jax.ShapeDtypeStruct((ROWS * COLS,), jnp.float32),), "cuda"


if __name__ == "__main__":
  x = jnp.linspace(-10.0, 10.0, ROWS * COLS, dtype=jnp.float32)
  np.testing.assert_array_equal(jax.jit(clip_gpu)(x), np.clip(np.asarray(x), 0.0, 6.0))
  print("gpu clip ok")
