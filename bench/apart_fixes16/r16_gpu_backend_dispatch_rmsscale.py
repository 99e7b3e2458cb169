"""Row scaling with a learned gain, ported from the TPU kernel to Mosaic GPU.

The TPU path came first; the Mosaic GPU path was added later and shares the
row-block helper and the per-backend scratch table with it.  Callers pick the
backend through `scale_rows(x, gain, backend=...)`.
"""
# fix-rate: kind=scratch meaning=preserving
from __future__ import annotations

import enum
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu


class Backend(enum.Enum):
  TPU = "tpu"
  MOSAIC_GPU = "mosaic_gpu"


# Where the f32 working copy of a row block lives on each backend.
SCRATCH_SPACE = {
    Backend.TPU: pltpu.VMEM,
    Backend.MOSAIC_GPU: plgpu.SMEM,
}

BLOCK_ROWS = {Backend.TPU: 8, Backend.MOSAIC_GPU: 64}


def _scale_block(x, gain, work):
  """Shared by both backends: widen to f32, scale, narrow back."""
  work[...] = x.astype(jnp.float32)
  work[...] = work[...] * gain.astype(jnp.float32)
  return work[...]


def _launch_tpu(x, gain):
  rows = BLOCK_ROWS[Backend.TPU]
  m, d = x.shape

  def body(x_ref, g_ref, o_ref, work):
    o_ref[...] = _scale_block(x_ref[...], g_ref[...], work).astype(o_ref.dtype)

  return pl.pallas_call(
      body,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(m // rows,),
      in_specs=[pl.BlockSpec((rows, d), lambda i: (i, 0)),
                pl.BlockSpec((1, d), lambda i: (0, 0))],
      out_specs=pl.BlockSpec((rows, d), lambda i: (i, 0)),
      scratch_shapes=[SCRATCH_SPACE[Backend.TPU]((rows, d), jnp.float32)],
  )(x, gain)


def _launch_gpu(x, gain):
  rows = BLOCK_ROWS[Backend.MOSAIC_GPU]
  m, d = x.shape

  def body(x_ref, g_ref, o_ref):
    i = jax.lax.axis_index("rows")
    block = pl.ds(i * rows, rows)
    work = pl.get_global(SCRATCH_SPACE[Backend.MOSAIC_GPU]((rows, d), jnp.float32))
    gain_row = jnp.broadcast_to(g_ref[...], (rows, d))
    o_ref[block, :] = _scale_block(x_ref[block, :], gain_row, work).astype(o_ref.dtype)

  return plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(m // rows,),
      grid_names=("rows",),
  )(x, gain)


LAUNCHERS = {
    Backend.TPU: _launch_tpu,
    Backend.MOSAIC_GPU: _launch_gpu,
}


@functools.partial(jax.jit, static_argnames=("backend",))
def scale_rows(x, gain, backend: Backend = Backend.TPU):
  return LAUNCHERS[backend](x, gain)


def target():
  x = jax.ShapeDtypeStruct((256, 128), jnp.bfloat16)
  gain = jax.ShapeDtypeStruct((1, 128), jnp.bfloat16)
  return functools.partial(scale_rows, backend=Backend.MOSAIC_GPU), (x, gain), "cuda"
