"""A Triton pallas_call that signals a global semaphore and lists an unused semaphore among its outputs:
Mosaic GPU has the global semaphore, and a kernel returns no semaphore."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, s_ref):
  done = pl.get_global(plgpu.SemaphoreType.REGULAR)
  o_ref[...] = x_ref[...] + 1.0
  pl.semaphore_signal(done)


def target():
  fn = pl.pallas_call(body, out_shape=(X, plgpu.SemaphoreType.REGULAR), grid=(2,))
  return fn, (X,), "triton"
