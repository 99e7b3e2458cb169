"""Bias + GELU epilogue (Mosaic GPU), tile sizes from the shared tiling table.

The tiling tuples are shared with the TPU epilogue, which tiles in three
levels (sublane groups, sublanes, lanes); the GPU path flattens the leading
levels into rows with `math.prod`.
"""
# fix-rate: kind=scratch meaning=preserving
from __future__ import annotations

import dataclasses
import functools
import math

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

TILINGS = {
    # name: (row groups, rows per group, lanes)
    "small": (2, 32, 128),
    "large": (4, 32, 128),
}


@dataclasses.dataclass(frozen=True)
class EpilogueConfig:
  tiling: str = "small"
  dtype: str = "bfloat16"
  accum_dtype: str = "float32"

  @property
  def tile(self) -> tuple[int, ...]:
    return TILINGS[self.tiling]

  @property
  def block_rows(self) -> int:
    return math.prod(self.tile[:-1])


def _gelu(v):
  return 0.5 * v * (1.0 + jnp.tanh(0.7978845608 * (v + 0.044715 * v * v * v)))


def _widened(cfg: EpilogueConfig, x, b):
  acc = pl.get_global(plgpu.SMEM((math.prod(cfg.tile[:-1]), cfg.tile[-1]),
                                 jnp.dtype(cfg.accum_dtype)))
  acc[...] = x.astype(acc.dtype) + b.astype(acc.dtype)
  return acc


def _epilogue_body(cfg: EpilogueConfig, x_ref, b_ref, o_ref):
  i = jax.lax.axis_index("m")
  rows = pl.ds(i * cfg.block_rows, cfg.block_rows)
  bias = jnp.broadcast_to(b_ref[...], (cfg.block_rows, cfg.tile[-1]))
  acc = _widened(cfg, x_ref[rows, :], bias)
  o_ref[rows, :] = _gelu(acc[...]).astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnames=("cfg",))
def bias_gelu(x, b, cfg: EpilogueConfig = EpilogueConfig()):
  m, n = x.shape
  assert n == cfg.tile[-1], (n, cfg.tile)
  return plgpu.kernel(
      functools.partial(_epilogue_body, cfg),
      out_type=jax.ShapeDtypeStruct((m, n), jnp.dtype(cfg.dtype)),
      grid=(m // cfg.block_rows,),
      grid_names=("m",),
  )(x, b)


def target():
  cfg = EpilogueConfig(tiling="large")
  x = jax.ShapeDtypeStruct((512, 128), jnp.bfloat16)
  b = jax.ShapeDtypeStruct((1, 128), jnp.bfloat16)
  return functools.partial(bias_gelu, cfg=cfg), (x, b), "cuda"
