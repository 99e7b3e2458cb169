"""A staging helper waits for its TMA copy with pl.semaphore_wait, on a barrier pl.run_scoped allocated."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((64, 128), jnp.float32)


def _negate(x_hbm, o_hbm):
  def staged(buf, copied):
    plgpu.copy_gmem_to_smem(x_hbm, buf, copied)
    pl.semaphore_wait(copied)
    o_hbm[...] = -buf[...]

  pl.run_scoped(staged, plgpu.SMEM(x_hbm.shape, jnp.float32), plgpu.Barrier())


def target():
  return plgpu.kernel(_negate, out_type=X), (X,), "cuda"
