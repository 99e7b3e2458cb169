"""Column mean of a projected activation on TPU, accumulator typed by `jax.eval_shape`.

The accumulator's shape and dtype are whatever the per-block partial computes, so
`_accumulator_shape` derives them with `jax.eval_shape` instead of repeating the maths.
"""

# fix-rate: kind=scratch_memory_space meaning=preserving

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class ColMeanConfig:
  block_rows: int = 256
  block_cols: int = 256


def _block_partial(x):
  x = x.astype(jnp.float32)
  return jnp.sum(x.reshape(-1, 8, x.shape[-1]), axis=0)


def _accumulator_shape(cfg: ColMeanConfig, dtype):
  block = jax.ShapeDtypeStruct((cfg.block_rows, cfg.block_cols), dtype)
  return jax.eval_shape(_block_partial, block)


def _colmean_kernel(rows, x_ref, o_ref, acc):
  r = pl.program_id(1)

  @pl.when(r == 0)
  def _():
    acc[...] = jnp.zeros_like(acc)

  acc[...] += _block_partial(x_ref[...])

  @pl.when(r == pl.num_programs(1) - 1)
  def _():
    o_ref[...] = jnp.sum(acc[...], axis=0, keepdims=True) / rows


@functools.partial(jax.jit, static_argnames=("cfg",))
def column_mean(x, cfg: ColMeanConfig = ColMeanConfig()):
  rows, cols = x.shape
  return pl.pallas_call(
      functools.partial(_colmean_kernel, rows),
      grid=(cols // cfg.block_cols, rows // cfg.block_rows),
      in_specs=[pl.BlockSpec((cfg.block_rows, cfg.block_cols), lambda c, r: (r, c))],
      out_specs=pl.BlockSpec((1, cfg.block_cols), lambda c, r: (0, c)),
      out_shape=jax.ShapeDtypeStruct((1, cols), jnp.float32),
      scratch_shapes=[_accumulator_shape(cfg, x.dtype)],
      compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
  )(x)


def target():
  return column_mean, (jax.ShapeDtypeStruct((2048, 512), jnp.bfloat16),), "tpu"
