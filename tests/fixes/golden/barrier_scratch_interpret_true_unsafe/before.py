"""A "barrier" from get_global under interpret=True, whose interpreter runs no barrier: the GPU interpreter runs it (unsafe)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  step = pl.get_global(plgpu.SemaphoreType.REGULAR)
  o_ref[...] = x_ref[...] * 2.0
  plgpu.barrier_arrive(step)
  plgpu.barrier_wait(step)


def target():
  fn = plgpu.kernel(body, out_type=X, interpret=True)
  return fn, (jnp.ones((128,), jnp.float32),), "interpret"


def expected():
  return jnp.full((128,), 2.0, jnp.float32)
