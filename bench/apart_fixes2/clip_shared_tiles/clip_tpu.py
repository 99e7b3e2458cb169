"""The TPU clip kernel: stages its block in the VMEM tile from clip_tiles and clips it."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl

import clip_tiles

ROWS, COLS = 8, 128


def clip_tpu_body(x_ref, o_ref, tile_ref):
  tile_ref[...] = x_ref[...]
  o_ref[...] = jnp.clip(tile_ref[...], 0.0, clip_tiles.clip_value("tpu"))


def clip_tpu(x):
  return pl.pallas_call(
      clip_tpu_body,
      out_shape=jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32),
      scratch_shapes=[clip_tiles.tile_buffer("tpu", ROWS, COLS)],
  )(x)


if __name__ == "__main__":
  x = jnp.linspace(-10.0, 10.0, ROWS * COLS, dtype=jnp.float32).reshape(ROWS, COLS)
  np.testing.assert_array_equal(jax.jit(clip_tpu)(x), np.clip(np.asarray(x), 0.0, 6.0))
  print("tpu clip ok")
