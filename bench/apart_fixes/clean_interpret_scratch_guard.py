"""A CPU test of a row-max kernel whose guard semaphore is kernel scratch, under the GPU interpreter."""
# fix-rate: clean

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def rowmax_body(x_ref, o_ref, guard):
  o_ref[...] = jnp.max(x_ref[...], axis=1)
  pl.semaphore_signal(guard)
  pl.semaphore_wait(guard)


def build(interpret=True):
  out = jax.ShapeDtypeStruct((8,), jnp.float32)
  return plgpu.kernel(
      rowmax_body, out_type=out, scratch_types=[plgpu.SemaphoreType.REGULAR], interpret=interpret
  )


def expected():
  return np.arange(64, dtype=np.float32).reshape(8, 8).max(axis=1)


def target():
  return build(), (jnp.arange(64, dtype=jnp.float32).reshape(8, 8),), "interpret"
