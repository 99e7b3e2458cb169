"""The get_global after a cond is the one over JAX's count, because the one in the cond's false branch
was reserved twice (Mosaic GPU lowers that branch twice): the one in the branch moves before the cond."""
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  ready = pl.get_global(plgpu.SemaphoreType.REGULAR)
  def notify():
    pl.semaphore_signal(ready)

  def skip():
    pass

  lax.cond(x_ref[0] > 0, skip, notify)
  done = pl.get_global(plgpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(done)
  pl.semaphore_wait(done)
  o_ref[...] = x_ref[...] + 1.0


def target():
  kernel = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",))
  return kernel, (X,), "cuda"
