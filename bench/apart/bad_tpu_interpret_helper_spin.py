"""Flag polling through a shared helper, checked on CPU with the TPU interpreter."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from apart_helpers.tpu_dma import spin_until_ready


def kernel(x_ref, o_ref, ready):
  pl.semaphore_signal(ready)
  spin_until_ready(ready)
  o_ref[...] = x_ref[...]


@functools.partial(jax.jit, static_argnames="interpret")
def run(x, interpret=pltpu.InterpretParams()):
  return pl.pallas_call(
      kernel,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      scratch_shapes=[pltpu.SemaphoreType.REGULAR],
      interpret=interpret,
  )(x)


def target():
  return run, (jnp.ones((8, 128), jnp.float32),), "interpret"


if __name__ == "__main__":
  print(run(jnp.ones((8, 128), jnp.float32)))
