"""Int8 weight dequantisation with per-row scales, staged through TMA (Mosaic GPU).

This is the prologue of a weight-only quantised matmul: an int8 weight tile is widened to
f32 and multiplied by its per-row scale before it is fed to the MMA. Block sizes come from
a small tuning table keyed by the weight's shape, as in the production kernels; each entry
also names the synchronisation objects the staged copy needs.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

# fix-rate: kind=barrier_type meaning=preserving


@dataclasses.dataclass(frozen=True)
class DequantTuning:
  block_rows: int
  lanes: int

  def scratch(self):
    """SMEM tile for the widened weights and the object the TMA copy arrives on."""
    return (
        plgpu.SMEM((self.block_rows, self.lanes), jnp.float32),
        plgpu.SemaphoreType.BARRIER,
    )


TUNING_TABLE: dict[tuple[int, int], DequantTuning] = {
    (128, 128): DequantTuning(block_rows=128, lanes=128),
    (256, 128): DequantTuning(block_rows=128, lanes=128),
    (512, 256): DequantTuning(block_rows=128, lanes=256),
}


def lookup_tuning(shape: tuple[int, int]) -> DequantTuning:
  tuning = TUNING_TABLE.get(tuple(shape))
  if tuning is None:
    raise KeyError(f"untuned weight shape {shape}; add it to TUNING_TABLE")
  return tuning


def _dequant_body(w_ref, scale_ref, o_ref, tile_ref, copied, *, tuning: DequantTuning):
  block = jax.lax.axis_index("row_blocks")
  rows = pl.ds(block * tuning.block_rows, tuning.block_rows)
  plgpu.copy_gmem_to_smem(w_ref.at[rows], tile_ref, copied)
  plgpu.barrier_wait(copied)
  o_ref[rows, :] = tile_ref[...] * scale_ref[rows, :]


def dequantize(w_f32: jax.Array, scales: jax.Array) -> jax.Array:
  """``w_f32`` holds the int8 codes already widened to f32 by the loader; ``scales`` is [rows, lanes]."""
  tuning = lookup_tuning(w_f32.shape)
  return plgpu.kernel(
      functools.partial(_dequant_body, tuning=tuning),
      out_type=jax.ShapeDtypeStruct(w_f32.shape, jnp.float32),
      scratch_types=tuning.scratch(),
      grid=(w_f32.shape[0] // tuning.block_rows,),
      grid_names=("row_blocks",),
  )(w_f32, scales)


def target():
  w = jax.ShapeDtypeStruct((256, 128), jnp.float32)
  s = jax.ShapeDtypeStruct((256, 128), jnp.float32)
  return dequantize, (w, s), "cuda"


def quantize_rows(w: jax.Array) -> tuple[jax.Array, jax.Array]:
  """Symmetric per-row int8 quantisation; returns the widened codes and the broadcast scales."""
  absmax = jnp.max(jnp.abs(w), axis=1, keepdims=True)
  scale = jnp.where(absmax == 0, 1.0, absmax / 127.0)
  codes = jnp.clip(jnp.round(w / scale), -127, 127)
  return codes.astype(jnp.float32), jnp.broadcast_to(scale, w.shape).astype(jnp.float32)


if __name__ == "__main__":
  w = jax.random.normal(jax.random.key(0), (256, 128), jnp.float32)
  codes, scales = quantize_rows(w)
  print("max dequant error:", float(jnp.max(jnp.abs(dequantize(codes, scales) - w))))
