"""PAL018: a TPU memory space (`pltpu.VMEM`) in a Mosaic GPU kernel's scratch.

A kernel ported from the TPU keeps its VMEM staging tile; the Mosaic GPU lowering places SMEM and TMEM only
(jax 0.12):

    NotImplementedError: Unsupported memory space: vmem

Fix: `plgpu.SMEM` of the same shape and dtype.
"""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((128, 128), jnp.float32)


def double(x_ref, o_ref, tile_ref):
  tile_ref[...] = x_ref[...] * 2.0
  o_ref[...] = tile_ref[...]


# pallas-lsp: trace(f32[128,128])
def double_it(x):
  return plgpu.kernel(double, out_type=X, scratch_types=[pltpu.VMEM((128, 128), jnp.float32)])(x)  # wrong: TPU


def target():
  return double_it, (X,), "cuda"
