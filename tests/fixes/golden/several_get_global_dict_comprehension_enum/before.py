"""A dict of REGULAR semaphores keyed by the members of an Enum (`{p: pl.get_global(...) for p in Phase}`) in a
kernel without grid: three members, three reservations where JAX made room for one."""
import enum

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


class Phase(enum.Enum):
  LOAD = "load"
  MATH = "math"
  STORE = "store"


def _phased(x_ref, o_ref):
  t = jax.lax.axis_index("t")
  fence = {p: pl.get_global(plgpu.SemaphoreType.REGULAR) for p in Phase}

  @pl.when(t == 0)
  def _():
    o_ref[...] = x_ref[...] * 3.0
    pl.semaphore_signal(fence[Phase.LOAD])
    pl.semaphore_signal(fence[Phase.MATH])
    pl.semaphore_wait(fence[Phase.STORE])

  @pl.when(t == 1)
  def _():
    pl.semaphore_wait(fence[Phase.LOAD])
    pl.semaphore_wait(fence[Phase.MATH])
    pl.semaphore_signal(fence[Phase.STORE])


def target():
  x = jax.ShapeDtypeStruct((128,), jnp.float32)
  return plgpu.kernel(_phased, out_type=x, num_threads=2, thread_name="t"), (x,), "cuda"
