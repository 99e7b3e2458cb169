"""A functools.partial decorator's interpret= comes from a module constant."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)
INTERPRET = True


@functools.partial(plgpu.kernel, out_type=X, grid=(2,), grid_names=("x",), interpret=INTERPRET)
def add_one(x_ref, o_ref):
  done = pl.get_global(plgpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(done)
  pl.semaphore_wait(done)
  o_ref[...] = x_ref[...] + 1.0


def target():
  return add_one, (jnp.ones((128,), jnp.float32),), "interpret"
