"""Row L2-normalisation on Mosaic GPU with the staging buffer picked by a `match` on the dtype.

Half-precision inputs are squared and summed in f32; f32 inputs in place; 8-bit ints are refused.
"""
# fix-rate: kind=scratch meaning=preserving

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

ROWS = 128
EPS = 1e-6


def staging_type(dtype, shape):
  match jnp.dtype(dtype).name:
    case "bfloat16" | "float16":
      return plgpu.SMEM(shape, jnp.float32)
    case "float32":
      return plgpu.SMEM(shape, jnp.float32)
    case other:
      raise TypeError(f"l2norm has no staging buffer for {other}")


def _l2norm_body(x_ref, o_ref, tile, barrier):
  block = jax.lax.axis_index("rows")
  rows = pl.ds(block * ROWS, ROWS)
  plgpu.copy_gmem_to_smem(x_ref.at[rows], tile, barrier)
  plgpu.barrier_wait(barrier)

  work = pl.get_global(staging_type(tile.dtype, tile.shape))
  work[...] = tile[...].astype(jnp.float32)
  sq = jnp.sum(work[...] * work[...], axis=1, keepdims=True)
  tile[...] = (work[...] * jax.lax.rsqrt(sq + EPS)).astype(tile.dtype)

  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(tile, o_ref.at[rows])
  plgpu.wait_smem_to_gmem(0)


def l2_normalize(x):
  n, d = x.shape
  return plgpu.kernel(
      _l2norm_body,
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(n // ROWS,),
      grid_names=("rows",),
      scratch_types=[plgpu.SMEM((ROWS, d), x.dtype), plgpu.Barrier(num_arrivals=1)],
  )(x)


def target():
  return l2_normalize, (jnp.ones((256, 128), jnp.float16),), "cuda"


if __name__ == "__main__":
  for dtype in (jnp.float32, jnp.bfloat16):
    print(dtype.__name__, l2_normalize(jnp.ones((256, 128), dtype))[0, :4])
