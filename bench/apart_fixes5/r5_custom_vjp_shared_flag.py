"""A scaled identity with its own forward and backward Mosaic GPU kernels (`jax.custom_vjp`).

Both kernels publish "this block is written" on a global completion flag that block 0 waits on before
it reports, through the same two helpers, so the forward and backward passes synchronise the same way.
"""
# fix-rate: kind=regular_semaphore meaning=preserving

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

ROWS = 128


def _completion_flag():
  """One flag in global memory, shared by every block of the launch."""
  return pl.get_global(plgpu.SemaphoreType.BARRIER)


def _publish_and_join(flag):
  block = jax.lax.axis_index("rows")
  num_blocks = jax.lax.axis_size("rows")

  @pl.when(block != 0)
  def _publish():
    pl.semaphore_signal(flag)

  @pl.when(block == 0)
  def _join():
    pl.semaphore_wait(flag, num_blocks - 1)


def _scale_body(scale, x_ref, o_ref, tile, barrier):
  block = jax.lax.axis_index("rows")
  rows = pl.ds(block * ROWS, ROWS)
  flag = _completion_flag()
  plgpu.copy_gmem_to_smem(x_ref.at[rows], tile, barrier)
  plgpu.barrier_wait(barrier)
  tile[...] = tile[...] * scale
  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(tile, o_ref.at[rows])
  plgpu.wait_smem_to_gmem(0)
  _publish_and_join(flag)


def _launch(scale, x):
  return plgpu.kernel(
      functools.partial(_scale_body, scale),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(x.shape[0] // ROWS,),
      grid_names=("rows",),
      scratch_types=[plgpu.SMEM((ROWS, x.shape[1]), x.dtype), plgpu.Barrier(num_arrivals=1)],
  )(x)


@functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
def scaled(scale, x):
  return _launch(scale, x)


def _scaled_fwd(scale, x):
  return _launch(scale, x), None


def _scaled_bwd(scale, _, dy):
  return (_launch(scale, dy),)


scaled.defvjp(_scaled_fwd, _scaled_bwd)


def loss_and_grad(x):
  return jax.value_and_grad(lambda x: scaled(0.5, x).sum())(x)


def target():
  return loss_and_grad, (jnp.ones((512, 128), jnp.float32),), "cuda"
