"""A get_global in a lax.cond branch whose type is a name bound in the branch for it alone: the binding
moves before the cond with the get_global."""
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  kind = plgpu.SemaphoreType.REGULAR  # one flag for the whole grid
  done = pl.get_global(kind)
  def notify():
    pl.semaphore_signal(done)

  def skip():
    pass

  lax.cond(x_ref[0] > 0, skip, notify)
  o_ref[...] = x_ref[...] + 1.0


def target():
  kernel = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",))
  return kernel, (X,), "cuda"
