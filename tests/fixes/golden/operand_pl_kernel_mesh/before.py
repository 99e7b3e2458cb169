"""pl.kernel with a Mosaic GPU mesh: operands arrive as GMEM refs."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  offsets = pl.get_global(plgpu.GMEM((128,), jnp.float32))
  o_ref[...] = x_ref[...] + offsets[...]


def target():
  kernel = pl.kernel(body, out_type=X, mesh=plgpu.Mesh(grid=(2,), grid_names=("x",)))
  return kernel, (X,), "cuda"
