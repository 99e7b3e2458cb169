"""Double-buffered rows: each slot's barrier is waited on with pl.semaphore_wait(..., 1) in a helper."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((4, 64, 128), jnp.float32)


def _fetch(x_hbm, bufs, landed, i, slot):
  plgpu.copy_gmem_to_smem(x_hbm.at[i], bufs.at[slot], landed.at[slot])


def _consume(o_hbm, bufs, landed, i, slot):
  plgpu.barrier_wait(landed.at[slot])
  o_hbm[i] = bufs[slot] + 2.0


def _body(x_hbm, o_hbm, bufs, landed):
  for i in range(4):
    _fetch(x_hbm, bufs, landed, i, i % 2)
    _consume(o_hbm, bufs, landed, i, i % 2)


def target():
  fn = plgpu.kernel(_body, out_type=X, scratch_types=[plgpu.SMEM((2, 64, 128), jnp.float32), plgpu.Barrier(num_barriers=2)])
  return fn, (X,), "cuda"
