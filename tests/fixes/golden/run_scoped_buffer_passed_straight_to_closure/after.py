"""A pl.kernel over a plgpu.Mesh with warpgroup threads hands its get_global SMEM tile straight to a closure
(`stage(pl.get_global(...))`): the closure is run_scoped's body, collective over the thread axis."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((256, 128), jnp.float32)


def body(x_gmem, o_gmem):
  block = jax.lax.axis_index("blocks")
  rows = pl.ds(block * 128, 128)

  def stage(tile):
    tile[...] = x_gmem[rows] * 2.0
    o_gmem[rows] = tile[...] + 1.0

  return pl.run_scoped(stage, plgpu.SMEM((128, 128), jnp.float32))


def target():
  kernel = pl.kernel(body, out_type=X, mesh=plgpu.Mesh(grid=(2,), grid_names=("blocks",)))
  return kernel, (X,), "cuda"
