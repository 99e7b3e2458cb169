"""A BARRIER semaphore asked of get_global in a pl.pallas_call that only interpret=True runs (compiled,
Triton has no get_global and no scratch), only signalled and waited on: a REGULAR scratch semaphore counts
them as it would (a global one fails in interpret mode too)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, sem_ref):
  # one per launch
  pl.semaphore_signal(sem_ref)
  pl.semaphore_wait(sem_ref)
  o_ref[...] = x_ref[...] + 1.0


def target():
  fn = pl.pallas_call(
    body, out_shape=X, interpret=True, scratch_shapes=[plgpu.SemaphoreType.REGULAR]
  )
  return fn, (jnp.zeros((128,), jnp.float32),), "interpret"


def expected():
  return jnp.ones((128,), jnp.float32)
