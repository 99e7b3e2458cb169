"""Block-arrival counting for a Mosaic GPU column reduction, declared by a decorator.

`@with_global(factory)` lets a body say which grid-wide resource it needs next to its
definition; the decorator asks for it with `pl.get_global` inside the kernel and passes
it as the last argument. Here it is a REGULAR semaphore every block signals and the
last block waits on, so it can publish that all partial results are written.
"""

# fix-rate: clean

import dataclasses
import functools
from typing import Callable

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

BLOCK = 128


def with_global(factory: Callable[[], object]):
  def decorate(body):
    @functools.wraps(body)
    def wrapped(*refs):
      return body(*refs, pl.get_global(factory()))
    return wrapped
  return decorate


@with_global(lambda: plgpu.SemaphoreType.REGULAR)
def _scale_and_publish(x_ref, o_ref, done_ref, arrivals):
  i = lax.axis_index("blocks")
  n = lax.axis_size("blocks")
  sl = pl.ds(i * BLOCK, BLOCK)
  o_ref[sl] = x_ref[sl] * 2

  @pl.when(i != n - 1)
  def _():
    pl.semaphore_signal(arrivals)

  @pl.when(i == n - 1)
  def _():
    pl.semaphore_wait(arrivals, n - 1)
    done_ref[...] = jnp.ones_like(done_ref)


@dataclasses.dataclass(frozen=True)
class PublishedScale:
  body: Callable
  name: str

  def __call__(self, x):
    (n,) = x.shape
    return plgpu.kernel(
        self.body,
        out_type=(jax.ShapeDtypeStruct((n,), x.dtype), jax.ShapeDtypeStruct((BLOCK,), jnp.int32)),
        grid=(n // BLOCK,),
        grid_names=("blocks",),
    )(x)


SCALE = PublishedScale(_scale_and_publish, "scale_and_publish")


def target():
  return jax.jit(SCALE), (jax.ShapeDtypeStruct((4096,), jnp.float32),), "cuda"


if __name__ == "__main__":
  print(jax.jit(SCALE)(jnp.ones((4096,), jnp.float32))[0][:4])
