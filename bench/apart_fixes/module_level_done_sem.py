"""A module that keeps its completion semaphore at module level, next to the kernel."""
# fix-rate: kind=into_body meaning=preserving

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

DONE = pl.get_global(plgpu.SemaphoreType.REGULAR)


def relu_kernel(x_ref, o_ref):
  o_ref[...] = jnp.maximum(x_ref[...], 0.0)
  pl.semaphore_signal(DONE)
  pl.semaphore_wait(DONE)


def target():
  io = jax.ShapeDtypeStruct((128,), jnp.float32)
  return plgpu.kernel(relu_kernel, out_type=io), (io,), "cuda"
