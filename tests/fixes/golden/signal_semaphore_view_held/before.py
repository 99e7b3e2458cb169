"""pl.semaphore_signal given the value of the view sems.at[1], held in a name, where the view was meant."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, sems):
  done = sems.at[1][...]  # the second of two
  pl.semaphore_signal(done)
  pl.semaphore_wait(sems.at[1])
  o_ref[...] = x_ref[...] + 1.0


def target():
  return plgpu.kernel(body, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR((2,))]), (X,), "cuda"
