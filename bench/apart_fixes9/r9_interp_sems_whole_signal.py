"""Two-stage producer/consumer row transform with per-stage flags, run interpreted on CPU.

Stage 0 writes ``x + 1`` into a VMEM buffer and raises its flag; stage 1 waits for it, writes
``2 * buffer`` to the output and raises its own flag, which the step consumes before it ends.
The flags are one semaphore array indexed by stage (``Stage.PRODUCE`` / ``Stage.CONSUME``).
``jax.default_backend() != "tpu"`` selects the interpreter, so the CPU test suite runs it.
"""

from __future__ import annotations

import enum

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

# fix-rate: kind=index meaning=preserving


class Stage(enum.IntEnum):
  PRODUCE = 0
  CONSUME = 1


NUM_STAGES = len(Stage)


def _raise(flags, stage: Stage):
  pl.semaphore_signal(flags)


def _await(flags, stage: Stage):
  pl.semaphore_wait(flags.at[stage])


def _two_stage_body(x_ref, o_ref, buf_ref, flags):
  buf_ref[...] = x_ref[...] + 1.0
  _raise(flags, Stage.PRODUCE)
  _await(flags, Stage.PRODUCE)
  o_ref[...] = buf_ref[...] * 2.0
  _raise(flags, Stage.CONSUME)
  _await(flags, Stage.CONSUME)


def two_stage(x: jax.Array) -> jax.Array:
  rows, cols = x.shape
  return pl.pallas_call(
      _two_stage_body,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(rows // 8,),
      in_specs=[pl.BlockSpec((8, cols), lambda i: (i, 0))],
      out_specs=pl.BlockSpec((8, cols), lambda i: (i, 0)),
      scratch_shapes=[
          pltpu.VMEM((8, cols), x.dtype),
          pltpu.SemaphoreType.REGULAR((NUM_STAGES,)),
      ],
      interpret=jax.default_backend() != "tpu",
  )(x)


def _x():
  return jnp.arange(16 * 128, dtype=jnp.float32).reshape(16, 128)


def target():
  return two_stage, (_x(),), "interpret"


def expected():
  return (_x() + 1.0) * 2.0


def two_stage_batched(xs: jax.Array) -> jax.Array:
  """Applies ``two_stage`` to each matrix of a ``[batch, rows, cols]`` stack."""
  return jnp.stack([two_stage(x) for x in xs])


if __name__ == "__main__":
  print(bool(jnp.array_equal(two_stage(_x()), expected())))
  print(two_stage_batched(jnp.stack([_x(), -_x()])).shape)
