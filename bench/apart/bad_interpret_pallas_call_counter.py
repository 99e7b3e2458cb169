"""A CPU test harness that interprets a kernel using a global counter."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def counting_copy(x_ref, o_ref):
  counter = pl.get_global(plgpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(counter, 1)
  o_ref[...] = x_ref[...]
  pl.semaphore_wait(counter, 1)


@functools.partial(jax.jit, static_argnames=("interpret",))
def run(x, interpret=True):
  return pl.pallas_call(
      counting_copy,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      interpret=interpret,
  )(x)


def target():
  return run, (jnp.arange(64, dtype=jnp.float32),), "interpret"


if __name__ == "__main__":
  x = jnp.arange(64, dtype=jnp.float32)
  np.testing.assert_allclose(run(x), x)
