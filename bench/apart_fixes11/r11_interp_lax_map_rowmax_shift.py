"""Max-shift of very long logits rows (the stable-softmax prologue), chunked with `jax.lax.map`.

Each chunk of rows is one interpreted `pallas_call` (this module is the CPU reference path
used by the sampler tests); the row maxima are kept in a small SMEM array while the block is
scanned, then subtracted.
"""
# fix-rate: kind=scratch meaning=preserving

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

CHUNK_ROWS = 8
LANES = 128


def _shift_body(x_ref, o_ref):
  row_max = pl.get_global(pltpu.SMEM((CHUNK_ROWS,), jnp.float32))
  for r in range(CHUNK_ROWS):
    row_max[r] = jnp.max(x_ref[r, :])
  for r in range(CHUNK_ROWS):
    o_ref[r, :] = x_ref[r, :] - row_max[r]


_chunk_call = functools.partial(
    pl.pallas_call,
    _shift_body,
    out_shape=jax.ShapeDtypeStruct((CHUNK_ROWS, LANES), jnp.float32),
    interpret=True,
)


def max_shift(logits):
  chunks = logits.reshape(-1, CHUNK_ROWS, LANES)
  out = jax.lax.map(lambda c: _chunk_call()(c), chunks)
  return out.reshape(logits.shape)


def _data():
  return ((np.arange(32 * LANES, dtype=np.float32).reshape(32, LANES) * 13) % 17) / 4.0


def target():
  return max_shift, (jnp.asarray(_data()),), "interpret"


def expected():
  x = _data()
  return x - x.max(axis=-1, keepdims=True)
