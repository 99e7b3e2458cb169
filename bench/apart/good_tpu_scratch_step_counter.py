"""Counts finished grid steps with a scratch semaphore (TPU)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _scale_kernel(x_ref, o_ref, steps):
  o_ref[...] = x_ref[...] * 2.0
  pl.semaphore_signal(steps)
  pl.semaphore_wait(steps, 1)


def scale(x):
  return pl.pallas_call(
      _scale_kernel,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(x.shape[0] // 8,),
      in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
      out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
      scratch_shapes=[pltpu.SemaphoreType.REGULAR],
  )(x)


def target():
  return scale, (jax.ShapeDtypeStruct((32, 128), jnp.float32),), "tpu"


if __name__ == "__main__":
  print(jax.jit(scale)(jnp.ones((32, 128), jnp.float32)))
