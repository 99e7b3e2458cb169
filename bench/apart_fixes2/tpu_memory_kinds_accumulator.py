"""A TPU row-sum over a K grid axis; the accumulator's memory kind is looked up in a registry.

`MEMORY_KINDS` maps the roles of the kernel's buffers to TPU memory spaces, so that the same code can
be pointed at SMEM for scalar accumulators. The accumulator was fetched with `pl.get_global`.
"""
# fix-rate: kind=scratch meaning=preserving

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

MEMORY_KINDS = {
    "accumulator": pltpu.VMEM,
    "counter": pltpu.SMEM,
}


@dataclasses.dataclass(frozen=True)
class RowSumConfig:
  rows: int = 8
  cols: int = 1024
  block_k: int = 256

  @property
  def steps(self):
    return self.cols // self.block_k


def rowsum_kernel(cfg: RowSumConfig, x_ref, o_ref):
  acc = pl.get_global(MEMORY_KINDS["accumulator"]((cfg.rows, 128), jnp.float32))
  k = pl.program_id(0)

  @pl.when(k == 0)
  def _init():
    acc[...] = jnp.zeros_like(acc)

  block = x_ref[...]
  for lane in range(cfg.block_k // 128):
    acc[...] += block[:, lane * 128:(lane + 1) * 128]

  @pl.when(k == cfg.steps - 1)
  def _flush():
    o_ref[...] = acc[...]


def lane_partial_sums(cfg: RowSumConfig, x):
  return pl.pallas_call(
      functools.partial(rowsum_kernel, cfg),
      grid=(cfg.steps,),
      in_specs=[pl.BlockSpec((cfg.rows, cfg.block_k), lambda k: (0, k))],
      out_specs=pl.BlockSpec((cfg.rows, 128), lambda k: (0, 0)),
      out_shape=jax.ShapeDtypeStruct((cfg.rows, 128), jnp.float32),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
  )(x)


def target():
  cfg = RowSumConfig()
  x = jax.ShapeDtypeStruct((cfg.rows, cfg.cols), jnp.float32)
  return functools.partial(lane_partial_sums, cfg), (x,), "tpu"


if __name__ == "__main__":
  cfg = RowSumConfig()
  x = jnp.arange(cfg.rows * cfg.cols, dtype=jnp.float32).reshape(cfg.rows, cfg.cols)
  got = jax.jit(functools.partial(lane_partial_sums, cfg))(x).sum(axis=1)
  np.testing.assert_allclose(got, np.asarray(x).sum(axis=1), rtol=1e-6)
  print("row sums ok")
