"""Rotary position embedding for one head on Hopper, laid out per `r11_rope_layout`."""
# fix-rate: kind=scratch meaning=preserving

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

import r11_rope_layout as layout


def _rope_body(x_ref, table_ref, o_ref, table):
  ready = pl.get_global(layout.TABLE_READY)
  plgpu.copy_gmem_to_smem(table_ref, table, ready)
  plgpu.barrier_wait(ready)
  lo_out = pl.get_global(layout.ROTATED_HALF)
  hi_out = pl.get_global(layout.ROTATED_HALF)

  lo = x_ref[pl.ds(0, layout.HALF)].astype(jnp.float32)
  hi = x_ref[pl.ds(layout.HALF, layout.HALF)].astype(jnp.float32)
  cos = table[pl.ds(0, layout.HALF)]
  sin = table[pl.ds(layout.HALF, layout.HALF)]
  lo_out[...] = lo * cos - hi * sin
  hi_out[...] = hi * cos + lo * sin
  o_ref[pl.ds(0, layout.HALF)] = lo_out[...].astype(o_ref.dtype)
  o_ref[pl.ds(layout.HALF, layout.HALF)] = hi_out[...].astype(o_ref.dtype)


def apply_rope(x, table):
  if x.shape != (layout.HEAD_DIM,):
    raise ValueError(f"expected one head of {layout.HEAD_DIM}, got {x.shape}")
  return plgpu.kernel(
      _rope_body,
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      scratch_types=[layout.TABLE_ROW],
  )(x, table)


def target():
  args = (
      jax.ShapeDtypeStruct((layout.HEAD_DIM,), jnp.bfloat16),
      jax.ShapeDtypeStruct((layout.HEAD_DIM,), jnp.float32),
  )
  return apply_rope, args, "cuda"
