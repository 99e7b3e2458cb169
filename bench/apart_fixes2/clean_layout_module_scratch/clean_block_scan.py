"""A blocked running sum whose carry buffer is declared as SMEM scratch from the layouts module beside it."""
# fix-rate: clean

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

import clean_scan_layouts as layouts


def block_scan_body(x_ref, y_ref, carry):
  carry[...] = jnp.zeros(layouts.CARRY.shape, layouts.CARRY.dtype)
  for b in range(layouts.NUM_BLOCKS):
    block = x_ref[pl.ds(b * layouts.BLOCK, layouts.BLOCK)]
    carry[...] = carry[...] + block
    y_ref[pl.ds(b * layouts.BLOCK, layouts.BLOCK)] = carry[...]


def block_scan(x):
  return plgpu.kernel(
      block_scan_body, out_type=layouts.SEQUENCE,
      scratch_types=[plgpu.SMEM(layouts.CARRY.shape, layouts.CARRY.dtype)])(x)


def reference(x):
  blocks = np.asarray(x).reshape(layouts.NUM_BLOCKS, layouts.BLOCK)
  return np.cumsum(blocks, axis=0).reshape(-1)


def target():
  return block_scan, (layouts.SEQUENCE,), "cuda"


if __name__ == "__main__":
  x = jnp.ones(layouts.SEQUENCE.shape, layouts.SEQUENCE.dtype)
  np.testing.assert_array_equal(jax.jit(block_scan)(x), reference(x))
  print("scan ok")
