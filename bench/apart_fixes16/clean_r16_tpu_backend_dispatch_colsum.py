"""Column sums over row blocks: one op, a launcher per backend.

The Mosaic GPU launcher was written first (a single block per row tile, the
sum staged in SMEM); the TPU launcher was added when the op moved to TPU
pods, with a sequential grid over row blocks carrying the running sum.
"""
# fix-rate: clean
from __future__ import annotations

import enum
import functools
from typing import Callable

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu


class Backend(str, enum.Enum):
  MOSAIC_GPU = "mosaic_gpu"
  TPU = "tpu"


def _colsum_gpu(x):
  m, n = x.shape

  def body(x_ref, o_ref, acc):
    acc[...] = jnp.zeros((n,), jnp.float32)

    def add_row(r, carry):
      acc[...] += x_ref[r, :].astype(jnp.float32)
      return carry

    jax.lax.fori_loop(0, m, add_row, None)
    o_ref[...] = acc[...].astype(o_ref.dtype)

  return plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct((n,), x.dtype),
      scratch_types=[plgpu.SMEM((n,), jnp.float32)],
  )(x)


def _colsum_tpu(x, *, block_rows=8, block_cols=128):
  m, n = x.shape

  def body(x_ref, o_ref, acc):

    @pl.when(pl.program_id(1) == 0)
    def _init():
      acc[...] = jnp.zeros_like(acc)

    acc[...] += jnp.sum(x_ref[...].astype(jnp.float32), axis=0, keepdims=True)

    @pl.when(pl.program_id(1) == pl.num_programs(1) - 1)
    def _store():
      o_ref[...] = acc[...].astype(o_ref.dtype)

  return pl.pallas_call(
      body,
      out_shape=jax.ShapeDtypeStruct((1, n), x.dtype),
      grid=(n // block_cols, m // block_rows),
      in_specs=[pl.BlockSpec((block_rows, block_cols), lambda j, i: (i, j))],
      out_specs=pl.BlockSpec((1, block_cols), lambda j, i: (0, j)),
      scratch_shapes=[pltpu.VMEM((1, block_cols), jnp.float32)],
      compiler_params=pltpu.CompilerParams(
          dimension_semantics=("parallel", "arbitrary")),
  )(x)[0]


_DISPATCH: dict[Backend, Callable[[jax.Array], jax.Array]] = {
    Backend.MOSAIC_GPU: _colsum_gpu,
    Backend.TPU: _colsum_tpu,
}


@functools.partial(jax.jit, static_argnames=("backend",))
def colsum(x, backend: Backend | str = Backend.TPU):
  return _DISPATCH[Backend(backend)](x)


def target():
  x = jax.ShapeDtypeStruct((64, 256), jnp.float32)
  return functools.partial(colsum, backend="tpu"), (x,), "tpu"
