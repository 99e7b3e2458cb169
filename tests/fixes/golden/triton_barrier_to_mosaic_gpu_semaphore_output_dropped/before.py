"""A Triton pallas_call that syncs its block on a global semaphore used as a barrier and lists an unused
semaphore among its outputs: Mosaic GPU has SMEM barriers, and a kernel returns no semaphore."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, s_ref):
  sync = pl.get_global(plgpu.SemaphoreType.REGULAR)
  plgpu.barrier_arrive(sync)
  plgpu.barrier_wait(sync)
  o_ref[...] = x_ref[...] + 1.0


def target():
  fn = pl.pallas_call(body, out_shape=(X, plgpu.SemaphoreType.REGULAR), grid=(2,))
  return fn, (X,), "triton"
