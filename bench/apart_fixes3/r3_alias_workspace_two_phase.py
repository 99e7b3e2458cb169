"""Two-phase dequantize-then-scale kernel with a GMEM workspace (Mosaic GPU).

Phase 1 dequantizes the int8 codes of one row block into a float workspace in global memory,
phase 2 reads the workspace back, applies the per-row scale and writes the output. The
workspace is the kernel's own: nothing outside the kernel reads it.
"""
# fix-rate: kind=output meaning=preserving

import functools

import jax
import jax.experimental.pallas as P
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

ROWS_PER_BLOCK = 128


def _dequant_phase(codes_gmem, zero_point, workspace, rows):
  workspace[rows, :] = (codes_gmem[rows, :].astype(jnp.float32) - zero_point)


def _scale_phase(workspace, scale_gmem, out_gmem, rows):
  out_gmem[rows, :] = workspace[rows, :] * scale_gmem[rows, :]


def _dequant_scale_kernel(codes_gmem, scale_gmem, out_gmem, *, zero_point, total_rows, width):
  rows = P.ds(jax.lax.axis_index("row_block") * ROWS_PER_BLOCK, ROWS_PER_BLOCK)
  workspace = P.get_global(plgpu.GMEM((total_rows, width), jnp.float32))
  _dequant_phase(codes_gmem, zero_point, workspace, rows)
  _scale_phase(workspace, scale_gmem, out_gmem, rows)


@functools.partial(jax.jit, static_argnames=("zero_point",))
def dequantize(codes: jax.Array, scale: jax.Array, zero_point: int = 0) -> jax.Array:
  """Returns `(codes - zero_point) * scale[:, None]` as float32."""
  total_rows, width = codes.shape
  if total_rows % ROWS_PER_BLOCK:
    raise ValueError(f"{total_rows=} must be a multiple of {ROWS_PER_BLOCK}")
  body = functools.partial(
      _dequant_scale_kernel, zero_point=float(zero_point), total_rows=total_rows, width=width)
  return plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct((total_rows, width), jnp.float32),
      grid=(total_rows // ROWS_PER_BLOCK,),
      grid_names=("row_block",),
  )(codes, jnp.broadcast_to(scale[:, None], (total_rows, width)))


def dequantize_reference(codes, scale, zero_point=0):
  return (codes.astype(jnp.float32) - zero_point) * scale[:, None]


def target():
  args = (jax.ShapeDtypeStruct((512, 128), jnp.int8), jax.ShapeDtypeStruct((512,), jnp.float32))
  return dequantize, args, "cuda"


if __name__ == "__main__":
  codes = jax.random.randint(jax.random.key(3), (512, 128), -128, 127, jnp.int8)
  scale = jnp.full((512,), 0.05, jnp.float32)
  print(jnp.max(jnp.abs(dequantize(codes, scale, 3) - dequantize_reference(codes, scale, 3))))
