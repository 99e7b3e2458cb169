"""A TPU semaphore type beside a REGULAR one in a gridless Mosaic GPU kernel: as two global semaphores they
would meet JAX's gridless get_global bug (PAL004), so the kernel also gets a one-block grid."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  ready = pl.get_global(plgpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(ready)
  pl.semaphore_wait(ready)
  flag = pl.get_global(plgpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(flag)
  pl.semaphore_wait(flag)
  o_ref[...] = x_ref[...]


def target():
  return plgpu.kernel(body, out_type=X, grid=(1,), grid_names=("block",)), (X,), "cuda"
