"""A blocked running sum: each block adds the carry of the blocks before it.

The carry buffer's shape and dtype are kept in scan_layouts.py beside this file; the kernel asked
`pl.get_global` for the `ShapeDtypeStruct` itself.
"""
# fix-rate: kind=scratch meaning=preserving

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

import scan_layouts as layouts


def block_scan_body(x_ref, y_ref):
  carry = pl.get_global(layouts.CARRY)
  carry[...] = jnp.zeros(layouts.CARRY.shape, layouts.CARRY.dtype)
  for b in range(layouts.NUM_BLOCKS):
    block = x_ref[pl.ds(b * layouts.BLOCK, layouts.BLOCK)]
    carry[...] = carry[...] + block
    y_ref[pl.ds(b * layouts.BLOCK, layouts.BLOCK)] = carry[...]


def block_scan(x):
  return plgpu.kernel(block_scan_body, out_type=layouts.SEQUENCE)(x)


def reference(x):
  blocks = np.asarray(x).reshape(layouts.NUM_BLOCKS, layouts.BLOCK)
  return np.cumsum(blocks, axis=0).reshape(-1)


def target():
  return block_scan, (layouts.SEQUENCE,), "cuda"


if __name__ == "__main__":
  x = jnp.ones(layouts.SEQUENCE.shape, layouts.SEQUENCE.dtype)
  np.testing.assert_array_equal(jax.jit(block_scan)(x), reference(x))
  print("scan ok")
