"""Running column maximum over row blocks, with interpret mode carried by a `ContextVar`.

Library code asks `interpret_enabled()` instead of taking an `interpret=` argument on every
function; tests and CPU tooling wrap calls in `with interpreted():`.
"""
# fix-rate: clean

import contextlib
import contextvars

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

_INTERPRET = contextvars.ContextVar("pallas_interpret", default=False)
BLOCK_ROWS = 8
LANES = 128


@contextlib.contextmanager
def interpreted(enabled: bool = True):
  token = _INTERPRET.set(enabled)
  try:
    yield
  finally:
    _INTERPRET.reset(token)


def interpret_enabled() -> bool:
  return _INTERPRET.get()


def _colmax_body(x_ref, o_ref, best):
  i = pl.program_id(0)

  @pl.when(i == 0)
  def _start():
    best[...] = jnp.full((BLOCK_ROWS, LANES), -jnp.inf, jnp.float32)

  best[...] = jnp.maximum(best[...], x_ref[...])

  @pl.when(i == pl.num_programs(0) - 1)
  def _done():
    o_ref[...] = jnp.max(best[...], axis=0, keepdims=True)


def column_max(x):
  rows, lanes = x.shape
  return pl.pallas_call(
      _colmax_body,
      out_shape=jax.ShapeDtypeStruct((1, lanes), jnp.float32),
      grid=(rows // BLOCK_ROWS,),
      in_specs=[pl.BlockSpec((BLOCK_ROWS, lanes), lambda i: (i, 0))],
      out_specs=pl.BlockSpec((1, lanes), lambda i: (0, 0)),
      scratch_shapes=[pltpu.VMEM((BLOCK_ROWS, LANES), jnp.float32)],
      interpret=interpret_enabled(),
  )(x)


def _data():
  return (np.arange(32 * LANES, dtype=np.float32).reshape(32, LANES) * 7) % 101


def checked_column_max(x):
  with interpreted():
    return column_max(x)


def target():
  return checked_column_max, (jnp.asarray(_data()),), "interpret"


def expected():
  return _data().max(axis=0, keepdims=True)
