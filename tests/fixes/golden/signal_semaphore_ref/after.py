"""pl.semaphore_signal given sem[...], the value read out of a scratch semaphore, where the ref was meant."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, sem):
  pl.semaphore_signal(sem)  # tell the next step
  pl.semaphore_wait(sem)
  o_ref[...] = x_ref[...] + 1.0


def target():
  return plgpu.kernel(body, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR]), (X,), "cuda"
