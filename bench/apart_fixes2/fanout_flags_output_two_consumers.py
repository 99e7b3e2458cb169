"""One producer kernel, two consumer kernels: the producer returns a pair of flags, one per consumer.

The flags are a `REGULAR((2,))` semaphore array in the producer's `out_type`; each consumer waits on
its own entry before reading the produced row.
"""
# fix-rate: kind=alloc_semaphore meaning=preserving

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

WIDTH = 128
ROW = jax.ShapeDtypeStruct((WIDTH,), jnp.float32)
CONSUMERS = 2


def produce_body(x_ref, y_ref, flags_ref):
  y_ref[...] = jnp.abs(x_ref[...])
  for c in range(CONSUMERS):
    pl.semaphore_signal(flags_ref.at[c])


def make_consumer(slot: int, fn):
  def body(flags_ref, y_ref, out_ref):
    pl.semaphore_wait(flags_ref.at[slot])
    out_ref[...] = fn(y_ref[...])

  return plgpu.kernel(body, out_type=ROW)


produce = plgpu.kernel(
    produce_body, out_type=(ROW, plgpu.SemaphoreType.REGULAR((CONSUMERS,)))
)
consume_sqrt = make_consumer(0, jnp.sqrt)
consume_square = make_consumer(1, lambda v: v * v)


def fanout(x):
  y, flags = produce(x)
  return consume_sqrt(flags, y), consume_square(flags, y)


def target():
  return fanout, (ROW,), "cuda"


if __name__ == "__main__":
  x = jnp.linspace(-4.0, 4.0, WIDTH, dtype=jnp.float32)
  roots, squares = jax.jit(fanout)(x)
  np.testing.assert_allclose(roots, np.sqrt(np.abs(np.asarray(x))), rtol=1e-6)
  np.testing.assert_allclose(squares, np.asarray(x) ** 2, rtol=1e-6)
  print("fanout ok")
