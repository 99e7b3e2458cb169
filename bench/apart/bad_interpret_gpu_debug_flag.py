"""Debug build of a signalling kernel: runs under the GPU interpreter on CPU."""
import os

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

DEBUG = os.environ.get("KERNEL_DEBUG", "1") == "1"


def _body(x_ref, o_ref):
  done = pl.get_global(plgpu.SemaphoreType.REGULAR)
  o_ref[...] = x_ref[...] + 2.0
  pl.semaphore_signal(done)
  pl.semaphore_wait(done, 1)


def add_two(x):
  return plgpu.kernel(
      _body,
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(2,),
      grid_names=("b",),
      interpret=DEBUG,
  )(x)


def target():
  return add_two, (jnp.zeros((128,), jnp.float32),), "interpret"


if __name__ == "__main__":
  print(jax.jit(add_two)(jnp.zeros((128,), jnp.float32)))
