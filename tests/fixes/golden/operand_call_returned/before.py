"""plgpu.kernel built and returned with its body by name."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  # the lookup table
  lut = pl.get_global(plgpu.GMEM((128,), jnp.float32))
  o_ref[...] = x_ref[...] + lut[...]


def target():
  return plgpu.kernel(body, out_type=X), (X,), "cuda"
