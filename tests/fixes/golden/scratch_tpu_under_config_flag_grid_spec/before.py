"""A TPU row-sum kernel in a PrefetchScalarGridSpec whose running sum exists only when the config streams columns
in several blocks: asked of get_global under `if cfg.streamed:`; in the grid spec's scratch it becomes
`(T if cfg.streamed else None)`."""
import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class RowSumConfig:
  block_rows: int = 64
  block_cols: int = 128
  streamed: bool = True


def _row_sum(offsets_ref, x_ref, o_ref, *, cfg):
  c = pl.program_id(1)
  if cfg.streamed:
    running = pl.get_global(pltpu.VMEM((cfg.block_rows, 128), jnp.float32))

    @pl.when(c == 0)
    def _():
      running[...] = jnp.zeros_like(running)

    running[...] += jnp.sum(x_ref[...], axis=1, keepdims=True) + offsets_ref[0]

    @pl.when(c == pl.num_programs(1) - 1)
    def _():
      o_ref[...] = running[...]
  else:
    o_ref[...] = jnp.broadcast_to(jnp.sum(x_ref[...], axis=1, keepdims=True), o_ref.shape)


def row_sum(offsets, x, cfg=RowSumConfig()):
  rows, cols = x.shape
  return pl.pallas_call(
      functools.partial(_row_sum, cfg=cfg),
      out_shape=jax.ShapeDtypeStruct((rows, 128), jnp.float32),
      grid_spec=pltpu.PrefetchScalarGridSpec(
          num_scalar_prefetch=1,
          grid=(rows // cfg.block_rows, cols // cfg.block_cols),
          in_specs=[pl.BlockSpec((cfg.block_rows, cfg.block_cols), lambda r, c, off: (r, c))],
          out_specs=pl.BlockSpec((cfg.block_rows, 128), lambda r, c, off: (r, 0)),
      ),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
  )(offsets, x)


def target():
  return row_sum, (jax.ShapeDtypeStruct((1,), jnp.float32), jax.ShapeDtypeStruct((256, 512), jnp.float32)), "tpu"
