"""A Triton pallas_call that reads a barrier-type global semaphore in one switch branch and signals a
global semaphore: Mosaic GPU allocates only REGULAR ones, and lowers a switch's branch twice."""
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  def count():
    seen = pl.get_global(plgpu.SemaphoreType.BARRIER)
    _ = pl.semaphore_read(seen)
  def skip():
    pass
  lax.switch((x_ref[0] > 0).astype(jnp.int32), [count, skip])
  done = pl.get_global(plgpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(done)
  o_ref[...] = x_ref[...] + 1.0


def target():
  fn = pl.pallas_call(body, out_shape=X, grid=(2,))
  return fn, (X,), "triton"
