"""Scale each block by its prefetched factor, staging it in f32; the grid spec comes from scaled_block_specs.py."""
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import scaled_block_specs


@dataclasses.dataclass(frozen=True)
class BlockConfig:
  rows: int = 8
  lanes: int = 128
  blocks: int = 4


def _scale(s_ref, x_ref, o_ref, f32_ref):
  f32_ref[...] = x_ref[...].astype(jnp.float32)
  o_ref[...] = (f32_ref[...] * s_ref[pl.program_id(0)]).astype(o_ref.dtype)


def scale_blocks(scales, x, cfg=BlockConfig()):
  return pl.pallas_call(
      _scale,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid_spec=scaled_block_specs.scaled_blocks_spec(cfg),
      scratch_shapes=[pltpu.VMEM((cfg.rows, cfg.lanes), jnp.float32)],
  )(scales, x)


def target():
  return scale_blocks, (jax.ShapeDtypeStruct((4,), jnp.float32), jax.ShapeDtypeStruct((32, 128), jnp.bfloat16)), "tpu"
