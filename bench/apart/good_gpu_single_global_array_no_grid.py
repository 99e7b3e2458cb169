"""Ping-pong handshake with both counters in one global semaphore array."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

PING, PONG = 0, 1


@plgpu.kernel(out_type=jax.ShapeDtypeStruct((128,), jnp.float32))
def handshake(x_ref, o_ref):
  sems = pl.get_global(plgpu.SemaphoreType.REGULAR((2,)))
  pl.semaphore_signal(sems.at[PING])
  pl.semaphore_wait(sems.at[PING], 1)
  o_ref[...] = x_ref[...] - 1.0
  pl.semaphore_signal(sems.at[PONG])
  pl.semaphore_wait(sems.at[PONG], 1)


def target():
  return handshake, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"


if __name__ == "__main__":
  print(handshake(jnp.zeros((128,), jnp.float32)))
