"""A gridless kernel with two get_globals, one in a lax.switch's first branch (lowered twice): a one-block
grid gives each get_global its slot, and the one in the branch moves before the switch."""
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  count = pl.get_global(plgpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(count)

  def positive():
    flag = pl.get_global(plgpu.SemaphoreType.REGULAR((2,)))
    pl.semaphore_signal(flag.at[0])

  def negative():
    pass

  lax.switch((x_ref[0] > 0).astype(jnp.int32), [positive, negative])
  o_ref[...] = x_ref[...] + 1.0


def target():
  return plgpu.kernel(body, out_type=X), (X,), "cuda"
