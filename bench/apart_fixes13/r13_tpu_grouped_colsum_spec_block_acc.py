"""Grouped column sums on TPU: rows are bucketed by a prefetched group id per row block.

The output block spec is built once by `GroupedColsumSpecs`; the f32 accumulator takes
its shape from that spec's `block_shape` so the two can never disagree.
"""

# fix-rate: kind=scratch_grid_spec meaning=preserving

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class GroupedColsumSpecs:
  block_rows: int
  block_cols: int
  num_groups: int

  @property
  def x_spec(self) -> pl.BlockSpec:
    return pl.BlockSpec((self.block_rows, self.block_cols), lambda j, i, gid: (i, j))

  @property
  def out_spec(self) -> pl.BlockSpec:
    return pl.BlockSpec((8, self.block_cols), lambda j, i, gid: (gid[i], j))


_TUNING = {  # (rows, cols) -> (block_rows, block_cols)
    (1024, 512): (128, 256),
    (2048, 1024): (256, 512),
}


def _grouped_colsum_kernel(specs, gid_ref, x_ref, o_ref):
  i = pl.program_id(1)
  acc = pl.get_global(pltpu.VMEM(specs.out_spec.block_shape, jnp.float32))

  @pl.when(i == 0)
  def _():
    acc[...] = jnp.zeros_like(acc)

  part = jnp.sum(x_ref[...].astype(jnp.float32), axis=0, keepdims=True)
  acc[...] += jnp.broadcast_to(part, acc.shape)

  @pl.when(i == pl.num_programs(1) - 1)
  def _():
    o_ref[...] = acc[...].astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnames=("num_groups",))
def grouped_colsum(x, group_ids, num_groups: int = 1):
  rows, cols = x.shape
  br, bc = _TUNING.get((rows, cols), (128, 128))
  specs = GroupedColsumSpecs(br, bc, num_groups)
  grid_spec = pltpu.PrefetchScalarGridSpec(
      num_scalar_prefetch=1,
      grid=(cols // bc, rows // br),
      in_specs=[specs.x_spec],
      out_specs=specs.out_spec,
  )
  return pl.pallas_call(
      functools.partial(_grouped_colsum_kernel, specs),
      grid_spec=grid_spec,
      out_shape=jax.ShapeDtypeStruct((8 * num_groups, cols), jnp.float32),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
  )(group_ids, x)


def target():
  args = (jax.ShapeDtypeStruct((1024, 512), jnp.bfloat16), jax.ShapeDtypeStruct((8,), jnp.int32))
  return grouped_colsum, args, "tpu"
