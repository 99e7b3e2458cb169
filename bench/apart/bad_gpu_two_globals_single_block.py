"""Ping-pong handshake between two phases of a single-block kernel."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def _handshake_body(x_ref, o_ref):
  ping = pl.get_global(plgpu.SemaphoreType.REGULAR)
  pong = pl.get_global(plgpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(ping)
  pl.semaphore_wait(ping, 1)
  o_ref[...] = x_ref[...] - 1.0
  pl.semaphore_signal(pong)
  pl.semaphore_wait(pong, 1)


handshake = functools.partial(
    plgpu.kernel, out_type=jax.ShapeDtypeStruct((128,), jnp.float32)
)(_handshake_body)


def target():
  return handshake, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"


if __name__ == "__main__":
  print(handshake(jnp.zeros((128,), jnp.float32)))
