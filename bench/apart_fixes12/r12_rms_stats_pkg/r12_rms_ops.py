"""RMSNorm front end: the mean of squares from the Pallas kernel, the scaling in XLA."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from r12_rms_kernel import LANES, RmsConfig, grid_and_specs, mean_square_kernel

_TUNED = {("bfloat16", 4096): RmsConfig(256, 1024, 4096), ("float32", 256): RmsConfig(8, 128, 256)}


def get_default_config(dtype, hidden: int) -> RmsConfig:
  return _TUNED.get((jnp.dtype(dtype).name, hidden), RmsConfig(8, min(hidden, 512), hidden))


@functools.partial(jax.jit, static_argnames=("interpret",))
def mean_square(x, interpret: bool = False):
  rows, hidden = x.shape
  cfg = get_default_config(x.dtype, hidden)
  grid, in_specs, out_specs = grid_and_specs(cfg, rows)
  out = pl.pallas_call(
      functools.partial(mean_square_kernel, cfg=cfg),
      out_shape=jax.ShapeDtypeStruct((rows, LANES), jnp.float32),
      grid=grid,
      in_specs=in_specs,
      out_specs=out_specs,
      compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
      interpret=interpret,
  )(x)
  return out[:, 0]


def rms_norm(x, weight, eps=1e-6, interpret=False):
  ms = mean_square(x, interpret=interpret)
  return (x * jax.lax.rsqrt(ms[:, None] + eps) * weight).astype(x.dtype)
