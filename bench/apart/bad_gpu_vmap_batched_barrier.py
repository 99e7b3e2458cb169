"""Batched copy: a Mosaic GPU kernel vmapped over the leading axis, grid barrier."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

SYNC = plgpu.SemaphoreType.BARRIER


def _body(x_ref, o_ref):
  sem = pl.get_global(SYNC)
  o_ref[...] = x_ref[...] + 1.0
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem, 1)


def one(x):
  return plgpu.kernel(_body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(1,), grid_names=("g",))(x)


batched = jax.vmap(one)


def target():
  return batched, (jax.ShapeDtypeStruct((4, 128), jnp.float32),), "cuda"


if __name__ == "__main__":
  print(batched(jnp.ones((4, 128), jnp.float32)))
