"""A get_global in a lax.cond branch: Mosaic GPU lowers the branch more than once and keeps what it
reserved; the type is the branch's default, which the cond (passing no operands) leaves it."""
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  # signal the other block when this one has work
  def notify(kind=plgpu.SemaphoreType.REGULAR):
    done = pl.get_global(kind)
    pl.semaphore_signal(done)

  def skip():
    pass

  lax.cond(x_ref[0] > 0, skip, notify)
  o_ref[...] = x_ref[...] + 1.0


def target():
  kernel = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",))
  return kernel, (X,), "cuda"
