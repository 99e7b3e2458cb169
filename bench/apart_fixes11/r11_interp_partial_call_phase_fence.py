"""Two-phase in-place prefix update (`y[i] += y[i-1]` per lane block) on the TPU interpreter.

The module keeps one `pallas_call` preset for CPU runs; the body fences its two phases with
a semaphore so the second phase only starts once the first has written its rows, as the
compiled version does with asynchronous copies in flight.
"""
# fix-rate: kind=scratch meaning=preserving

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ROWS, LANES = 8, 128

cpu_pallas_call = functools.partial(
    pl.pallas_call,
    interpret=pltpu.InterpretParams(dma_execution_mode="eager"),
)


def _two_phase_body(x_ref, o_ref):
  phase_done = pl.get_global(pltpu.SemaphoreType.REGULAR)
  o_ref[...] = x_ref[...] * 2.0
  pl.semaphore_signal(phase_done, 1)
  pl.semaphore_wait(phase_done, 1)
  for r in range(1, ROWS):
    o_ref[r, :] = o_ref[r, :] + o_ref[r - 1, :]


def doubled_prefix(x):
  spec = pl.BlockSpec((ROWS, LANES), lambda i: (i, 0))
  return cpu_pallas_call(
      _two_phase_body,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(x.shape[0] // ROWS,),
      in_specs=[spec],
      out_specs=spec,
  )(x)


def _data():
  return (np.arange(16 * LANES, dtype=np.float32).reshape(16, LANES) % 5) - 2.0


def target():
  return doubled_prefix, (jnp.asarray(_data()),), "interpret"


def expected():
  blocks = (_data() * 2.0).reshape(2, ROWS, LANES)
  return np.cumsum(blocks, axis=1).reshape(16, LANES)
