"""Two global arrays and a BARRIER semaphore in one kernel: fix-all applies the three safe fixes."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  scale = pl.get_global(plgpu.GMEM((128,), jnp.float32))
  shift = pl.get_global(plgpu.GMEM((128,), jnp.float32))
  done = pl.get_global(plgpu.SemaphoreType.BARRIER)
  pl.semaphore_signal(done)
  pl.semaphore_wait(done)
  o_ref[...] = x_ref[...] * scale[...] + shift[...]


def target():
  return plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",)), (X,), "cuda"
