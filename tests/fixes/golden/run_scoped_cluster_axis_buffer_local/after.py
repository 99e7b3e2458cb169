"""A cluster of two blocks: the staging tile is asked for collective over the cluster axis."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((2, 64, 128), jnp.float32)
PAIR = "pair"


def _body(x_hbm, o_hbm):
  me = jax.lax.axis_index(PAIR)

  def scale(tile):
    tile[...] = x_hbm[me]
    o_hbm[me] = tile[...] * 4.0

  pl.run_scoped(scale, plgpu.SMEM((64, 128), jnp.float32))


def target():
  fn = plgpu.kernel(_body, out_type=X, grid=(1,), grid_names=("g",), cluster=(2,), cluster_names=(PAIR,))
  return fn, (X,), "cuda"
