"""A TPU kernel whose DMA semaphore, only signalled and waited on (no copy), has its type from another
module's constant: JAX refuses it; the constant, read by this allocation alone, becomes REGULAR there."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from sem_types import SEM_TYPE

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def body(x_ref, o_ref, sem):
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem)
  o_ref[...] = x_ref[...]


def target():
  return pl.pallas_call(body, out_shape=X, scratch_shapes=[SEM_TYPE]), (X,), "tpu"
