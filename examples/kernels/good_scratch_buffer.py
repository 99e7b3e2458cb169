"""Correct (the look-alike of PAL001): a staging buffer allocated as scratch, not with `pl.get_global`.

The same kernel as pal001_global_buffer.py, with the buffer in `scratch_types`: JAX passes it
as the body's last parameter. pallas-lsp reports nothing, and JAX lowers it for CUDA.
"""
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental.pallas import mosaic_gpu as plgpu

ROWS, COLS = 4, 128
X = jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32)


def scale_rows(x_ref, o_ref, staging):
  row = lax.axis_index("row")
  staging[...] = x_ref[row]
  o_ref[row] = staging[...] * 0.5


# pallas-lsp: trace(f32[4,128])
scale = plgpu.kernel(scale_rows, out_type=X, grid=(ROWS,), grid_names=("row",),
                     scratch_types=[plgpu.SMEM((COLS,), jnp.float32)])


def target():
  return scale, (X,), "cuda"
