"""Block-sparse row scaling for TPU: only the blocks listed in `block_ids` are visited.

The launch helper builds its `PrefetchScalarGridSpec` in one function and adds the f32
staging buffer for the dequantised block at the `pallas_call`.
"""
# fix-rate: kind=scratch_grid_spec meaning=preserving

import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class SparsePlan:
  block_rows: int = 8
  lanes: int = 128
  num_active: int = 4

  def grid_spec(self) -> pltpu.PrefetchScalarGridSpec:
    block = (self.block_rows, self.lanes)
    return pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=2,
        grid=(self.num_active,),
        in_specs=[pl.BlockSpec(block, lambda i, ids, scales: (ids[i], 0))],
        out_specs=pl.BlockSpec(block, lambda i, ids, scales: (i, 0)),
    )

  def staging(self):
    return [pltpu.VMEM((self.block_rows, self.lanes), jnp.float32)]


def _scale_body(ids_ref, scales_ref, x_ref, o_ref, work_ref):
  i = pl.program_id(0)
  work_ref[...] = x_ref[...].astype(jnp.float32)
  o_ref[...] = work_ref[...] * scales_ref[i]


def scale_active_blocks(block_ids, scales, x, plan: SparsePlan = SparsePlan()):
  return pl.pallas_call(
      _scale_body,
      out_shape=jax.ShapeDtypeStruct((plan.num_active * plan.block_rows, plan.lanes), jnp.float32),
      grid_spec=plan.grid_spec(),
      scratch_shapes=plan.staging(),
  )(block_ids, scales, x)


def target():
  args = (
      jax.ShapeDtypeStruct((4,), jnp.int32),
      jax.ShapeDtypeStruct((4,), jnp.float32),
      jax.ShapeDtypeStruct((64, 128), jnp.bfloat16),
  )
  return scale_active_blocks, args, "tpu"
