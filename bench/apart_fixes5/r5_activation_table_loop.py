"""Elementwise activations on Mosaic GPU, one kernel per entry of a module-level table built by a loop.

`KERNELS[name](x)` launches the body for that activation; every body shares `_load_tile`, which pulls
its row block from global memory by TMA and waits for it.
"""
# fix-rate: kind=barrier_scratch meaning=preserving

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

ROWS = 128

_ACTIVATIONS = (
    ("relu", lambda v: jnp.maximum(v, 0.0)),
    ("silu", lambda v: v * jax.nn.sigmoid(v)),
    ("square", lambda v: v * v),
)


def _load_tile(src, tile):
  ready = pl.get_global(plgpu.Barrier(num_arrivals=1))
  plgpu.copy_gmem_to_smem(src, tile, ready)
  plgpu.barrier_wait(ready)


def _activation_body(fn, x_ref, o_ref, tile):
  rows = pl.ds(jax.lax.axis_index("rows") * ROWS, ROWS)
  _load_tile(x_ref.at[rows], tile)
  tile[...] = fn(tile[...].astype(jnp.float32)).astype(tile.dtype)
  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(tile, o_ref.at[rows])
  plgpu.wait_smem_to_gmem(0)


def _make_launcher(fn):
  def launch(x):
    return plgpu.kernel(
        functools.partial(_activation_body, fn),
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(x.shape[0] // ROWS,),
        grid_names=("rows",),
        scratch_types=[plgpu.SMEM((ROWS, x.shape[1]), x.dtype)],
    )(x)

  return launch


KERNELS = {}
for _name, _fn in _ACTIVATIONS:
  KERNELS[_name] = _make_launcher(_fn)


def target():
  return KERNELS["silu"], (jnp.ones((384, 128), jnp.bfloat16),), "cuda"
