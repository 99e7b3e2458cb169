"""Two global arrays and a BARRIER semaphore in one kernel: fix-all applies the three safe fixes."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(shift_ref, scale_ref, x_ref, o_ref):
  done = pl.get_global(plgpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(done)
  pl.semaphore_wait(done)
  o_ref[...] = x_ref[...] * scale_ref[...] + shift_ref[...]


def target():
  return functools.partial(
    plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",)),
    jnp.zeros((128,), jnp.float32), jnp.zeros((128,), jnp.float32),
  ), (X,), "cuda"
