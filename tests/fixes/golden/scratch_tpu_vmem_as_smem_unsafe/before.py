"""TPU VMEM asked for with get_global in a Mosaic GPU kernel: the GPU has SMEM instead (unsafe: another memory)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  buf = pl.get_global(pltpu.VMEM((128,), jnp.float32))
  buf[...] = x_ref[...]
  o_ref[...] = buf[...] + 1.0


def target():
  return plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",)), (X,), "cuda"
