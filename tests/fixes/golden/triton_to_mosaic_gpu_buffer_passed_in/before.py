"""A Triton pallas_call that counts its blocks on a global semaphore and reads a global buffer: Mosaic GPU
has the semaphore, and takes the buffer only as an input."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  table = pl.get_global(pl.ANY((128,), jnp.float32))
  done = pl.get_global(plgpu.SemaphoreType.REGULAR)
  o_ref[...] = x_ref[...] + table[...]
  pl.semaphore_signal(done)


def target():
  fn = pl.pallas_call(body, out_shape=X, grid=(2,))
  return fn, (X,), "triton"
