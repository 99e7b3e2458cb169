"""Two-pass RMSNorm statistics on TPU: the sum of squares of each row, over feature blocks.

The row block's accumulator comes from the package's buffer module.
"""
# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from r10_rms_buffers import SUMSQ_LANES, sumsq_buffer


@dataclasses.dataclass(frozen=True)
class RmsStatsConfig:
  block_rows: int = 64
  block_features: int = 512
  eps: float = 1e-6


def _rms_stats_kernel(cfg: RmsStatsConfig, x_ref, inv_rms_ref):
  acc = sumsq_buffer(cfg.block_rows)
  f = pl.program_id(1)

  @pl.when(f == 0)
  def _zero():
    acc[...] = jnp.zeros_like(acc)

  x = x_ref[...].astype(jnp.float32)
  folded = x.reshape(cfg.block_rows, -1, SUMSQ_LANES)
  acc[...] += jnp.sum(folded * folded, axis=1)

  @pl.when(f == pl.num_programs(1) - 1)
  def _finish():
    features = cfg.block_features * pl.num_programs(1)
    total = jnp.sum(acc[...], axis=1, keepdims=True)
    inv_rms_ref[...] = jax.lax.rsqrt(total / features + cfg.eps) * jnp.ones_like(acc)


@functools.partial(jax.jit, static_argnames=("cfg",))
def rms_stats(x: jax.Array, cfg: RmsStatsConfig = RmsStatsConfig()) -> jax.Array:
  rows, features = x.shape
  return pl.pallas_call(
      functools.partial(_rms_stats_kernel, cfg),
      out_shape=jax.ShapeDtypeStruct((rows, SUMSQ_LANES), jnp.float32),
      grid=(rows // cfg.block_rows, features // cfg.block_features),
      in_specs=[pl.BlockSpec((cfg.block_rows, cfg.block_features), lambda i, f: (i, f))],
      out_specs=pl.BlockSpec((cfg.block_rows, SUMSQ_LANES), lambda i, f: (i, 0)),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
  )(x)


def target():
  return rms_stats, (jax.ShapeDtypeStruct((256, 2048), jnp.float32),), "tpu"


if __name__ == "__main__":
  print(rms_stats(jnp.full((256, 2048), 2.0, jnp.float32))[0, :2])
