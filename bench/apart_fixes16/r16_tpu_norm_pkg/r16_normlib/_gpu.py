"""Mosaic GPU RMS norm: one warpgroup per block of rows."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

from ._shared import NormConfig


def _body(cfg, x_ref, w_ref, o_ref, x32):
  i = jax.lax.axis_index("rows")
  rows = pl.ds(i * cfg.block_rows, cfg.block_rows)
  x32[...] = x_ref[rows, :].astype(jnp.float32)
  o_ref[rows, :] = (x32[...] * w_ref[...].astype(jnp.float32)).astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnames=("cfg",))
def rms_norm(x, w, cfg: NormConfig = NormConfig(block_rows=64)):
  m, d = x.shape
  return plgpu.kernel(
      functools.partial(_body, cfg),
      out_type=jax.ShapeDtypeStruct(x.shape, jnp.dtype(cfg.dtype)),
      grid=(m // cfg.block_rows,),
      grid_names=("rows",),
      scratch_types=[plgpu.SMEM((cfg.block_rows, d), jnp.float32)],
  )(x, w)
