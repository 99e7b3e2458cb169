"""PAL005: a REGULAR((len(Stage),)) array signalled whole by a helper that ignores its IntEnum stage."""
import enum

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jnp.arange(8 * 128, dtype=jnp.float32).reshape(8, 128)


class Stage(enum.IntEnum):
  PRODUCE = 0
  CONSUME = 1


def _raise(flags, stage: Stage):
  pl.semaphore_signal(flags.at[stage])


def _await(flags, stage: Stage):
  pl.semaphore_wait(flags.at[stage])


def body(x_ref, o_ref, flags):
  _raise(flags, Stage.PRODUCE)
  _await(flags, Stage.PRODUCE)
  o_ref[...] = x_ref[...] * 2.0


def target():
  kernel = pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct(X.shape, X.dtype),
                          scratch_shapes=[pltpu.SemaphoreType.REGULAR((len(Stage),))], interpret=True)
  return kernel, (X,), "interpret"


def expected():
  return X * 2.0
