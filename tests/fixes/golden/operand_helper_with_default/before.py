"""A helper with a defaulted parameter asks for the buffer: the new parameter goes before it."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def add_offsets(x_ref, o_ref, scale=1.0):
  offsets = pl.get_global(plgpu.GMEM((128,), jnp.float32))
  o_ref[...] = x_ref[...] + scale * offsets[...]


def body(x_ref, o_ref):
  add_offsets(x_ref, o_ref, scale=2.0)


def target():
  kernel = plgpu.kernel(body, out_type=X)
  return kernel, (X,), "cuda"
