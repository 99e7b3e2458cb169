"""A `pl.kernel` over a `plgpu.Mesh` (which takes no scratch) runs its tile loop in `pl.run_scoped(_tiles, acc=...)`
with keyword types; the barrier the loop asks of get_global joins them as one more keyword."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

BLOCKS, ROWS, COLS = 2, 64, 128


def _scale_rows(x_gmem, o_gmem, *, factor):
  b = jax.lax.axis_index("b")

  def _tiles(acc):
    ready = pl.get_global(plgpu.Barrier(num_arrivals=1))
    plgpu.copy_gmem_to_smem(x_gmem.at[b], acc, ready)
    plgpu.barrier_wait(ready)
    acc[...] = acc[...] * factor
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(acc, o_gmem.at[b])
    plgpu.wait_smem_to_gmem(0)

  pl.run_scoped(_tiles, acc=plgpu.SMEM((ROWS, COLS), jnp.float32))


def scale(x):
  mesh = plgpu.Mesh(grid=(BLOCKS,), grid_names=("b",))
  return pl.kernel(functools.partial(_scale_rows, factor=3.0), out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
                   mesh=mesh)(x)


def target():
  return scale, (jax.ShapeDtypeStruct((BLOCKS, ROWS, COLS), jnp.float32),), "cuda"
