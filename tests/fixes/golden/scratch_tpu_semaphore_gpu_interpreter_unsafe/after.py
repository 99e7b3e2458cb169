"""A TPU semaphore asked of get_global in a pl.pallas_call the GPU interpreter runs: that interpreter
allocates no TPU semaphore as scratch (jax 0.12: 'KeyError: SEMAPHORE'), interpret=True's does (unsafe:
another interpreter, without the GPU interpreter's race detection)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, sem_ref):
  pl.semaphore_signal(sem_ref)
  pl.semaphore_wait(sem_ref)
  o_ref[...] = x_ref[...] + 1.0


def target():
  fn = pl.pallas_call(
    body, out_shape=X, interpret=True, scratch_shapes=[pltpu.SemaphoreType.REGULAR]
  )
  return fn, (jnp.zeros((128,), jnp.float32),), "interpret"


def expected():
  return jnp.ones((128,), jnp.float32)
