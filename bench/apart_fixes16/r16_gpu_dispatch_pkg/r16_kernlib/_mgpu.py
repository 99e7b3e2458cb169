"""Mosaic GPU launchers."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

from ._common import BLOCK_ROWS, load_tile as _load_tile
from ._registry import Backend, register


def _silu_body(x_ref, o_ref, tile):
  i = jax.lax.axis_index("rows")
  rows = pl.ds(i * BLOCK_ROWS, BLOCK_ROWS)
  ready = pl.get_global(plgpu.Barrier(num_arrivals=1))
  x = _load_tile(x_ref.at[rows, :], tile, ready)[...]
  o_ref[rows, :] = x * jax.nn.sigmoid(x)


@register("silu", Backend.MOSAIC_GPU)
def silu(x):
  m, d = x.shape
  return plgpu.kernel(
      _silu_body,
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(m // BLOCK_ROWS,),
      grid_names=("rows",),
      scratch_types=[plgpu.SMEM((BLOCK_ROWS, d), x.dtype)],
  )(x)
