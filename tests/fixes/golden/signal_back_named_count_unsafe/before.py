"""A non-decrementing wait for a computed count, in a helper: the count is bound once, waited for, and
signalled back (unsafe)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)
STEPS = 3


def peek(sem, steps):
  pl.semaphore_wait(sem, value=steps + 1, decrement=False)


def body(x_ref, o_ref, sem):
  o_ref[...] = x_ref[...] + 1.0
  pl.semaphore_signal(sem, STEPS + 1)
  peek(sem, STEPS)
  pl.semaphore_wait(sem, STEPS + 1)


def target():
  fn = pl.pallas_call(body, out_shape=X, scratch_shapes=[pltpu.SemaphoreType.REGULAR],
                      interpret=pltpu.InterpretParams())
  return jax.jit(fn), (jnp.ones((8, 128), jnp.float32),), "interpret"


def expected():
  return jnp.full((8, 128), 2.0, jnp.float32)
