"""A barrier asked of get_global in a function that pl.run_scoped already runs for its SMEM tile, collective over
the warpgroups (jax's hopper_matmul_mgpu shape): the run_scoped allocates the barrier too, as a new parameter,
before its collective_axes, with the type as written (its names mean the same at the decorator)."""
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((2, 128), jnp.float32)


def body(x_gmem, o_gmem):
  arrivals = 1

  @functools.partial(
      pl.run_scoped,
      tile=plgpu.SMEM((2, 128), jnp.float32),
      collective_axes="wg",
  )
  def _scope(tile):
    bar = pl.get_global(plgpu.Barrier(num_arrivals=arrivals, num_barriers=2))  # one per warpgroup
    wg = lax.axis_index("wg")
    plgpu.copy_gmem_to_smem(x_gmem.at[wg], tile.at[wg], bar.at[wg])
    plgpu.barrier_wait(bar.at[wg])
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(tile.at[wg], o_gmem.at[wg])
    plgpu.wait_smem_to_gmem(0)


def target():
  kernel = plgpu.kernel(body, out_type=X, num_threads=2, thread_name="wg")
  return kernel, (X,), "cuda"
