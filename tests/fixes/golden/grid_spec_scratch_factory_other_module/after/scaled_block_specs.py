"""Grid specs of the block-scaling kernels."""
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def scaled_blocks_spec(cfg):
  block = (cfg.rows, cfg.lanes)
  return pltpu.PrefetchScalarGridSpec(
      num_scalar_prefetch=1,
      grid=(cfg.blocks,),
      in_specs=[pl.BlockSpec(block, lambda i, s: (i, 0))],
      out_specs=pl.BlockSpec(block, lambda i, s: (i, 0)),
      scratch_shapes=[pltpu.VMEM((cfg.rows, cfg.lanes), jnp.float32)],
  )
