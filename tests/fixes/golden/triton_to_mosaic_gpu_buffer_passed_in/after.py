"""A Triton pallas_call that counts its blocks on a global semaphore and reads a global buffer: Mosaic GPU
has the semaphore, and takes the buffer only as an input."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(table_ref, x_ref, o_ref):
  done = pl.get_global(plgpu.SemaphoreType.REGULAR)
  o_ref[...] = x_ref[...] + table_ref[...]
  pl.semaphore_signal(done)


def target():
  fn = functools.partial(
    plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",)),
    jnp.zeros((128,), jnp.float32),
  )
  return fn, (X,), "triton"
