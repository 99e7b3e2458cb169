"""A get_global written as a lambda with a defaulted parameter, called once with none."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  get_offsets = lambda kind=plgpu.GMEM((128,), jnp.float32): pl.get_global(kind)
  offsets = get_offsets()  # the whole table
  o_ref[...] = x_ref[...] + offsets[...]


def target():
  kernel = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",))
  return kernel, (X,), "cuda"
