"""Sum of squares per row (TPU), the block rows from a nested tiling.

The tiling tuples come from the library-wide table (shared with the GPU
kernels, which tile warps x rows); the TPU kernel multiplies them out.
"""
# fix-rate: kind=scratch meaning=preserving
import dataclasses
import functools
import operator

import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class SumsqConfig:
  row_tiling: tuple[int, ...] = (1, 8)
  block_k: int = 128
  acc_dtype: str = "float32"

  @property
  def block_rows(self) -> int:
    return functools.reduce(operator.mul, self.row_tiling)


def _sumsq_kernel(cfg: SumsqConfig, x_ref, o_ref):
  k = pl.program_id(1)
  acc = pl.get_global(pltpu.VMEM(
      (functools.reduce(operator.mul, cfg.row_tiling), cfg.block_k), np.dtype(cfg.acc_dtype)))

  @pl.when(k == 0)
  def _():
    acc[...] = jnp.zeros(acc.shape, acc.dtype)

  x = x_ref[...].astype(acc.dtype)
  acc[...] += x * x

  @pl.when(k == pl.num_programs(1) - 1)
  def _():
    o_ref[...] = jnp.sum(acc[...], axis=1, keepdims=True).astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnames=("cfg",))
def row_sumsq(x, cfg: SumsqConfig = SumsqConfig()):
  m, k = x.shape
  return pl.pallas_call(
      functools.partial(_sumsq_kernel, cfg),
      out_shape=jax.ShapeDtypeStruct((m, 1), jnp.float32),
      grid=(m // cfg.block_rows, k // cfg.block_k),
      in_specs=[pl.BlockSpec((cfg.block_rows, cfg.block_k), lambda i, j: (i, j))],
      out_specs=pl.BlockSpec((cfg.block_rows, 1), lambda i, j: (i, 0)),
  )(x)


def target():
  cfg = SumsqConfig(row_tiling=(2, 8))
  x = jax.ShapeDtypeStruct((64, 512), jnp.bfloat16)
  return functools.partial(row_sumsq, cfg=cfg), (x,), "tpu"
