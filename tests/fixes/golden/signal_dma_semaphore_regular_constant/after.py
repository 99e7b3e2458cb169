"""A TPU kernel whose semaphore type is a module constant: a DMA semaphore only signalled and waited on, in a
helper (no copy), which JAX refuses; the constant, read by this allocation alone, becomes REGULAR."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)

SEM_TYPE = pltpu.SemaphoreType.REGULAR


def signal_and_wait(sem):
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem)


def body(x_ref, o_ref, sem):
  signal_and_wait(sem)
  o_ref[...] = x_ref[...]


def target():
  return pl.pallas_call(body, out_shape=X, scratch_shapes=[SEM_TYPE]), (X,), "tpu"
