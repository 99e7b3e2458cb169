"""pl.semaphore_wait given sems[0], one value read out of a scratch semaphore array, where the view sems.at[0]
was meant."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, sems):
  pl.semaphore_signal(sems.at[0])
  pl.semaphore_wait(sems[0])  # the first of two
  o_ref[...] = x_ref[...] + 1.0


def target():
  return plgpu.kernel(body, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR((2,))]), (X,), "cuda"
