"""A TPU semaphore type asked for in a Mosaic GPU kernel run with interpret=True, only signalled and
waited on: a REGULAR scratch semaphore is what the interpreter runs (a global one fails there too)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  sem = pl.get_global(pltpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem)
  o_ref[...] = x_ref[...] + 1.0


def target():
  fn = plgpu.kernel(body, out_type=X, interpret=True)
  return fn, (jnp.zeros((128,), jnp.float32),), "interpret"


def expected():
  return jnp.ones((128,), jnp.float32)
