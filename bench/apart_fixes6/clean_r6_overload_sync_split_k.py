"""Split-K partial sums with a completion count, behind a jitted wrapper.

Each of the `splits` blocks reduces one K slice of `x` into its own row of `partials`; the blocks
then report to block 0, which waits for all of them before writing the `ready` marker the next
launch polls.  `sync_object` is the one place this package builds synchronisation objects: it is
`@overload`ed so type checkers know a "counter" is a semaphore ref and a "tma" object a barrier.
"""

from __future__ import annotations

import functools
from typing import Literal, overload

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

# fix-rate: clean

LANES = 128


@overload
def sync_type(kind: Literal["counter"]) -> plgpu.SemaphoreType: ...
@overload
def sync_type(kind: Literal["tma"]) -> plgpu.Barrier: ...
def sync_type(kind):
  """The type to allocate for a synchronisation object of `kind`."""
  if kind == "counter":
    # Blocks arrive on it and block 0 waits.
    return plgpu.SemaphoreType.REGULAR
  if kind == "tma":
    return plgpu.Barrier(num_arrivals=1)
  raise ValueError(kind)


def _split_k_body(x_gmem, partial_gmem, ready_gmem, *, k_per_split: int, splits: int):
  split = jax.lax.axis_index("split")
  arrived = pl.get_global(sync_type("counter"))
  acc = jnp.zeros((LANES,), jnp.float32)
  for step in range(k_per_split // LANES):
    acc += x_gmem[pl.ds(split * k_per_split + step * LANES, LANES)].astype(jnp.float32)
  partial_gmem[split] = acc

  @pl.when(split != 0)
  def _arrive():
    pl.semaphore_signal(arrived, 1)

  @pl.when(split == 0)
  def _mark_ready():
    pl.semaphore_wait(arrived, splits - 1)
    ready_gmem[...] = jnp.ones(ready_gmem.shape, ready_gmem.dtype)


@functools.partial(jax.jit, static_argnames=("splits",))
def split_k_partials(x: jax.Array, splits: int = 4) -> tuple[jax.Array, jax.Array]:
  (k,) = x.shape
  if k % (splits * LANES):
    raise ValueError(f"K={k} must be a multiple of splits * {LANES}")
  kernel = plgpu.kernel(
      functools.partial(_split_k_body, k_per_split=k // splits, splits=splits),
      out_type=(
          jax.ShapeDtypeStruct((splits, LANES), jnp.float32),
          jax.ShapeDtypeStruct((LANES,), jnp.int32),
      ),
      grid=(splits,),
      grid_names=("split",),
  )
  return kernel(x)


def finish(partials: jax.Array) -> jax.Array:
  return partials.sum()


def target():
  return functools.partial(split_k_partials, splits=4), (jax.ShapeDtypeStruct((2048,), jnp.float16),), "cuda"


if __name__ == "__main__":
  x = jnp.ones((2048,), jnp.float16)
  partials, ready = split_k_partials(x)
  print(finish(partials), ready[0])
