"""A compiled pl.kernel's SMEM buffer from a helper that returns it: the buffer must outlive the helper, so
pl.run_scoped allocates it where the helper was called, for the rest of body, and the helper goes."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)
TILE = plgpu.SMEM((128,), jnp.float32)


def staging_tile(what=TILE):
  """One tile per block."""
  return pl.get_global(what)


# the kernel
def body(x_ref, o_ref):
  tile = staging_tile()
  tile[...] = x_ref[...]
  o_ref[...] = tile[...] + 1.0


def target():
  kernel = pl.kernel(body, out_type=X, mesh=plgpu.Mesh(grid=(2,), grid_names=("x",)))
  return kernel, (X,), "cuda"
