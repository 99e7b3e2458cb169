"""A pallas_call run with interpret=True whose body pulses a global semaphore."""
# fix-rate: kind=scratch meaning=preserving

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def square_body(x_ref, o_ref):
  sem = pl.get_global(plgpu.SemaphoreType.REGULAR)
  o_ref[...] = x_ref[...] * x_ref[...]
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem)


@functools.partial(jax.jit, static_argnames=("interpret",))
def square(x, interpret=True):
  return pl.pallas_call(
      square_body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), interpret=interpret
  )(x)


def expected():
  return np.arange(16, dtype=np.float32) ** 2


def target():
  return square, (jnp.arange(16, dtype=jnp.float32),), "interpret"
