"""Per-row mean and max-abs of activations (TPU kernel), for layer statistics.

The kernel runs under the TPU interpreter in the CPU test job
(`LayerStats(interpret=pltpu.InterpretParams())`).  The two row statistics
are written by a shared helper that takes its buffers as keyword arguments.
"""
# fix-rate: kind=scratch meaning=preserving
import dataclasses
import functools
from typing import Any

import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _row_stats(x, o_ref, *, centered, absval):
  centered[...] = x - jnp.mean(x, axis=-1, keepdims=True)
  absval[...] = jnp.abs(centered[...])
  o_ref[...] = jnp.max(absval[...], axis=-1, keepdims=True)


@dataclasses.dataclass(frozen=True)
class LayerStats:
  block_rows: int = 8
  interpret: Any = False

  def _kernel(self, x_ref, o_ref):
    shape = (self.block_rows, x_ref.shape[-1])
    buffers = {
        "centered": pl.get_global(pltpu.VMEM(shape, jnp.float32)),
        "absval": pl.get_global(pltpu.VMEM(shape, jnp.float32)),
    }
    _row_stats(x_ref[...].astype(jnp.float32), o_ref, **buffers)

  def __call__(self, x):
    m, d = x.shape
    return pl.pallas_call(
        self._kernel,
        out_shape=jax.ShapeDtypeStruct((m, 1), jnp.float32),
        grid=(m // self.block_rows,),
        in_specs=[pl.BlockSpec((self.block_rows, d), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((self.block_rows, 1), lambda i: (i, 0)),
        interpret=self.interpret,
    )(x)


_X = ((np.arange(16 * 128, dtype=np.float32).reshape(16, 128) * 7) % 16) - 8.0


def target():
  stats = LayerStats(interpret=pltpu.InterpretParams())
  return jax.jit(stats), (jnp.asarray(_X),), "interpret"


def expected():
  centered = _X - _X.mean(-1, keepdims=True)
  return np.abs(centered).max(-1, keepdims=True)
