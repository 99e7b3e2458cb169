"""Running prefix maximum over row blocks, with a grid-wide phase flag, interpreted on CPU.

Each grid step takes the elementwise maximum of its block and the running maximum kept in a
VMEM accumulator (initialised on the first step), then writes the running maximum out. A
phase flag separates the accumulator update from the store. The memory objects the kernel
uses are named by ``Resource``, an enum whose members know how to materialise themselves.
"""

from __future__ import annotations

import enum

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

# fix-rate: kind=scratch meaning=preserving

BLOCK = (8, 128)


class Resource(enum.Enum):
  RUNNING_MAX = "running_max"
  PHASE_FLAG = "phase_flag"

  def spec(self):
    if self is Resource.RUNNING_MAX:
      return pltpu.VMEM(BLOCK, jnp.float32)
    return pltpu.SemaphoreType.REGULAR

  def acquire(self):
    """The resource inside the kernel body."""
    return pl.get_global(self.spec())


def _prefix_max_body(x_ref, o_ref, acc_ref):
  step = pl.program_id(0)
  flag = Resource.PHASE_FLAG.acquire()

  @pl.when(step == 0)
  def _init():
    acc_ref[...] = x_ref[...]

  acc_ref[...] = jnp.maximum(acc_ref[...], x_ref[...])
  pl.semaphore_signal(flag)
  pl.semaphore_wait(flag)
  o_ref[...] = acc_ref[...]


def prefix_max(x: jax.Array) -> jax.Array:
  rows, cols = x.shape
  spec = pl.BlockSpec(BLOCK, lambda i: (i, 0))
  return pl.pallas_call(
      _prefix_max_body,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(rows // BLOCK[0],),
      in_specs=[spec],
      out_specs=spec,
      scratch_shapes=[Resource.RUNNING_MAX.spec()],
      interpret=True,
  )(x)


def _x():
  # Values that rise and fall so the running maximum differs from the input.
  base = jnp.arange(32 * 128, dtype=jnp.float32).reshape(4, 8, 128)
  return (base * jnp.array([1.0, -1.0, 2.0, 0.5])[:, None, None]).reshape(32, 128)


def target():
  return prefix_max, (_x(),), "interpret"


def expected():
  blocks = _x().reshape(4, 8, 128)
  return jax.lax.cummax(blocks, axis=0).reshape(32, 128)


if __name__ == "__main__":
  print(bool(jnp.array_equal(prefix_max(_x()), expected())))
