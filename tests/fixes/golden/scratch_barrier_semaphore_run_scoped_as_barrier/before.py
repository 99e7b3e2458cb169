"""Two halves of a row block copied onto one BARRIER semaphore from pl.run_scoped, then waited on as a barrier."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((4, 64, 128), jnp.float32)


def _rows(x_hbm, o_hbm):
  block = jax.lax.axis_index("rows")

  def stage(lo, hi, landed):
    plgpu.copy_gmem_to_smem(x_hbm.at[block, pl.ds(0, 32)], lo, landed)
    plgpu.copy_gmem_to_smem(x_hbm.at[block, pl.ds(32, 32)], hi, landed)
    plgpu.barrier_wait(landed)
    o_hbm[block, pl.ds(0, 32)] = lo[...] + 1.0
    o_hbm[block, pl.ds(32, 32)] = hi[...] + 1.0

  half = plgpu.SMEM((32, 128), jnp.float32)
  pl.run_scoped(stage, half, half, plgpu.SemaphoreType.BARRIER)


def target():
  fn = plgpu.kernel(_rows, out_type=X, grid=(4,), grid_names=("rows",))
  return fn, (X,), "cuda"
