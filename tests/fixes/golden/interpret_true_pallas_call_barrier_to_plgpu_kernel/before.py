"""An interpret=True pallas_call syncing on a "barrier" from get_global: its interpreter runs no barrier."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  sync = pl.get_global(plgpu.SemaphoreType.REGULAR)
  plgpu.barrier_arrive(sync)
  plgpu.barrier_wait(sync)
  o_ref[...] = x_ref[...]


def target():
  fn = pl.pallas_call(body, out_shape=X, interpret=True)
  return fn, (jnp.ones((128,), jnp.float32),), "interpret"


def expected():
  return jnp.ones((128,), jnp.float32)
