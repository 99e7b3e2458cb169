"""A BARRIER semaphore type held in a class attribute, only signalled and waited on."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


class Kinds:
  done = plgpu.SemaphoreType.BARRIER  # signalled by every block


def body(x_ref, o_ref):
  done = pl.get_global(Kinds.done)
  pl.semaphore_signal(done)
  pl.semaphore_wait(done)
  o_ref[...] = x_ref[...] + 1.0


def target():
  return plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",)), (X,), "cuda"
