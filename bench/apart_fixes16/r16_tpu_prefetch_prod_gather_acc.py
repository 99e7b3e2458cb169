"""Sum of selected row blocks (TPU), the block order scalar-prefetched.

Block sizes come from the tiling tuples of the library table, multiplied out
with `math.prod`, and the accumulator dtype from `jnp.dtype` of the config.
"""
# fix-rate: kind=scratch_grid_spec meaning=preserving
import dataclasses
import functools
import math

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class SelectSumConfig:
  row_tiling: tuple[int, int] = (2, 8)
  lanes: int = 128
  acc_dtype: str = "float32"

  @property
  def block(self) -> tuple[int, int]:
    return (math.prod(self.row_tiling), self.lanes)


def _select_sum_kernel(cfg, order_ref, x_ref, o_ref):
  step = pl.program_id(0)
  acc = pl.get_global(pltpu.VMEM(cfg.block, jnp.dtype(cfg.acc_dtype)))

  @pl.when(step == 0)
  def _():
    acc[...] = jnp.zeros(acc.shape, acc.dtype)

  acc[...] += x_ref[...].astype(acc.dtype)

  @pl.when(step == pl.num_programs(0) - 1)
  def _():
    o_ref[...] = acc[...].astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnames=("cfg",))
def select_sum(order, x, cfg: SelectSumConfig = SelectSumConfig()):
  grid_spec = pltpu.PrefetchScalarGridSpec(
      num_scalar_prefetch=1,
      grid=(order.shape[0],),
      in_specs=[pl.BlockSpec(cfg.block, lambda s, order_ref: (order_ref[s], 0))],
      out_specs=pl.BlockSpec(cfg.block, lambda s, order_ref: (0, 0)),
  )
  return pl.pallas_call(
      functools.partial(_select_sum_kernel, cfg),
      grid_spec=grid_spec,
      out_shape=jax.ShapeDtypeStruct(cfg.block, x.dtype),
  )(order, x)


def target():
  order = jax.ShapeDtypeStruct((3,), jnp.int32)
  x = jax.ShapeDtypeStruct((128, 128), jnp.bfloat16)
  return select_sum, (order, x), "tpu"
