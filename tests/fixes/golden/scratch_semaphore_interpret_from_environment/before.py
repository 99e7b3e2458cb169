"""A REGULAR semaphore in a one-block plgpu.kernel interpreted when the environment says so: a scratch
semaphore runs interpreted and lowers compiled, and one block shares it as it shared the global one."""
import os

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  sem = pl.get_global(plgpu.SemaphoreType.REGULAR)  # handshake with ourselves
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem)
  o_ref[...] = x_ref[...] + 1.0


def target():
  fn = plgpu.kernel(body, out_type=X, interpret=os.environ.get("KERNEL_INTERPRET", "1") == "1")
  return fn, (jnp.zeros((128,), jnp.float32),), "interpret"


def expected():
  return jnp.ones((128,), jnp.float32)
