"""A REGULAR semaphore under plgpu.InterpretGPUParams, whose interpreter runs none: interpret=True runs a scratch one (unsafe)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  sem = pl.get_global(plgpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem)
  o_ref[...] = x_ref[...] + 1.0


def target():
  fn = plgpu.kernel(body, out_type=X, interpret=plgpu.InterpretGPUParams())
  return fn, (jnp.zeros((128,), jnp.float32),), "interpret"


def expected():
  return jnp.ones((128,), jnp.float32)
