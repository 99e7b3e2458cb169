"""interpret=True reaches plgpu.kernel through a factory's **options."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  done = pl.get_global(plgpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(done)
  pl.semaphore_wait(done)
  o_ref[...] = x_ref[...] + 1.0


def make_kernel(**options):
  return plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",), **options)


def target():
  kernel = make_kernel()
  return kernel, (jnp.ones((128,), jnp.float32),), "interpret"
