"""A pallas_call the GPU interpreter runs, syncing on a "barrier" from get_global: it runs none (nan + barrier)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)
GRID = (2,)


def body(x_ref, o_ref):
  o_ref[...] = x_ref[...] + 1.0
  sync = pl.get_global(plgpu.SemaphoreType.REGULAR)
  plgpu.barrier_arrive(sync)
  plgpu.barrier_wait(sync)


def target():
  fn = pl.pallas_call(body, out_shape=X, grid=GRID, interpret=plgpu.InterpretGPUParams())
  return fn, (jnp.ones((128,), jnp.float32),), "interpret"


def expected():
  return jnp.full((128,), 2.0, jnp.float32)
