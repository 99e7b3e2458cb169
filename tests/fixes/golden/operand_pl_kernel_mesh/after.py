"""pl.kernel with a Mosaic GPU mesh: operands arrive as GMEM refs."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(offsets_ref, x_ref, o_ref):
  o_ref[...] = x_ref[...] + offsets_ref[...]


def target():
  kernel = functools.partial(
    pl.kernel(body, out_type=X, mesh=plgpu.Mesh(grid=(2,), grid_names=("x",))),
    jnp.zeros((128,), jnp.float32),
  )
  return kernel, (X,), "cuda"
