"""Saturating round trip through the e4m3 range on Mosaic GPU (fake quantisation for QAT).

The staging buffer is picked by a `match` on the dtype: half-precision inputs are scaled and clipped in
f32, f32 inputs too; 8-bit ints are refused.
"""
# fix-rate: kind=scratch meaning=preserving

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

ROWS = 128
E4M3_MAX = 448.0
SCALE = 16.0


def staging_type(dtype, shape):
  match jnp.dtype(dtype).name:
    case "bfloat16" | "float16":
      return plgpu.SMEM(shape, jnp.float32)
    case "float32":
      return plgpu.SMEM(shape, jnp.float32)
    case other:
      raise TypeError(f"fake_quant has no staging buffer for {other}")


def _fake_quant_body(x_ref, o_ref, tile, barrier):
  block = jax.lax.axis_index("rows")
  rows = pl.ds(block * ROWS, ROWS)
  plgpu.copy_gmem_to_smem(x_ref.at[rows], tile, barrier)
  plgpu.barrier_wait(barrier)

  work = pl.get_global(staging_type(tile.dtype, tile.shape))
  work[...] = tile[...].astype(jnp.float32)
  work[...] = jnp.clip(work[...] * SCALE, -E4M3_MAX, E4M3_MAX)
  tile[...] = (work[...] / SCALE).astype(tile.dtype)

  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(tile, o_ref.at[rows])
  plgpu.wait_smem_to_gmem(0)


def fake_quant(x):
  n, d = x.shape
  return plgpu.kernel(
      _fake_quant_body,
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(n // ROWS,),
      grid_names=("rows",),
      scratch_types=[plgpu.SMEM((ROWS, d), x.dtype), plgpu.Barrier(num_arrivals=1)],
  )(x)


def target():
  return fake_quant, (jnp.ones((256, 128), jnp.float16),), "cuda"


if __name__ == "__main__":
  for dtype in (jnp.float32, jnp.bfloat16):
    print(dtype.__name__, fake_quant(jnp.ones((256, 128), dtype))[0, :4])
