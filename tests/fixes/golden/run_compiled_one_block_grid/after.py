"""An interpreted gridless kernel with two global semaphores: compiled, it would meet JAX's gridless
get_global bug (PAL004), so it also gets a one-block grid."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  ready = pl.get_global(plgpu.SemaphoreType.REGULAR)
  done = pl.get_global(plgpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(ready)
  pl.semaphore_wait(ready)
  pl.semaphore_signal(done)
  pl.semaphore_wait(done)
  o_ref[...] = x_ref[...] + 1.0


def target():
  kernel = plgpu.kernel(body, out_type=X, grid=(1,), grid_names=("block",))
  return kernel, (jnp.ones((128,), jnp.float32),), "interpret"
