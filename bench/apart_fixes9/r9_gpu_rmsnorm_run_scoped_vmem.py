"""RMSNorm scaling stage shared between the TPU and GPU backends (Mosaic GPU path).

``x * inv_rms * weight`` for one block of rows, with the row statistic precomputed and
broadcast by the caller. The staging helper ``_with_f32_tile`` was written for the TPU port
and later reused unchanged by this Mosaic GPU kernel.
"""

from __future__ import annotations

import enum

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

# fix-rate: kind=smem_type meaning=preserving


class Precision(enum.Enum):
  BF16 = "bfloat16"
  F32 = "float32"

  @property
  def dtype(self):
    return jnp.dtype(self.value)


BLOCK_ROWS = 64


def _with_f32_tile(shape, fn):
  """Runs ``fn(tile)`` with an f32 on-chip tile of ``shape``, freed when ``fn`` returns."""
  return pl.run_scoped(fn, pltpu.VMEM(shape, jnp.float32))


def _rms_scale_body(x_ref, inv_rms_ref, w_ref, o_ref):
  block = jax.lax.axis_index("row_blocks")
  rows = pl.ds(block * BLOCK_ROWS, BLOCK_ROWS)

  def scale(tile):
    tile[...] = x_ref[rows, :].astype(jnp.float32) * inv_rms_ref[rows, :]
    o_ref[rows, :] = (tile[...] * w_ref[rows, :]).astype(o_ref.dtype)

  _with_f32_tile((BLOCK_ROWS, x_ref.shape[1]), scale)


def rms_scale(x, inv_rms, weight, precision: Precision = Precision.F32):
  if x.dtype != precision.dtype:
    x = x.astype(precision.dtype)
  return plgpu.kernel(
      _rms_scale_body,
      out_type=jax.ShapeDtypeStruct(x.shape, precision.dtype),
      grid=(x.shape[0] // BLOCK_ROWS,),
      grid_names=("row_blocks",),
  )(x, inv_rms, weight)


def target():
  x = jax.ShapeDtypeStruct((256, 128), jnp.float32)
  return rms_scale, (x, x, x), "cuda"


def inverse_rms(x: jax.Array, eps: float = 1e-6) -> jax.Array:
  """The row statistic, broadcast to ``x``'s shape as the kernel expects it."""
  xf = x.astype(jnp.float32)
  return jnp.broadcast_to(jax.lax.rsqrt(jnp.mean(xf * xf, axis=1, keepdims=True) + eps), x.shape)


def rms_norm(x: jax.Array, weight: jax.Array, precision: Precision = Precision.F32) -> jax.Array:
  """Full RMSNorm: the statistic in XLA, the scaling in the kernel."""
  w = jnp.broadcast_to(weight.astype(jnp.float32), x.shape)
  return rms_scale(x, inverse_rms(x), w, precision)


def rms_norm_reference(x, weight, eps: float = 1e-6):
  xf = x.astype(jnp.float32)
  return xf * jax.lax.rsqrt(jnp.mean(xf * xf, axis=1, keepdims=True) + eps) * weight


if __name__ == "__main__":
  x = jax.random.normal(jax.random.key(0), (256, 128), jnp.float32)
  weight = jnp.linspace(0.5, 1.5, 128, dtype=jnp.float32)
  got = rms_norm(x, weight)
  print(float(jnp.max(jnp.abs(got - rms_norm_reference(x, weight)))))
