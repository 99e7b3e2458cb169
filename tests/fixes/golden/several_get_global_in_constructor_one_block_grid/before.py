"""A producer/consumer pair of flags asked for in a helper class's __init__, in a gridless two-warpgroup kernel."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


class Flags:
  def __init__(self):
    self.full = pl.get_global(plgpu.SemaphoreType.REGULAR)
    self.empty = pl.get_global(plgpu.SemaphoreType.REGULAR)


def body(x_ref, o_ref):
  wg = jax.lax.axis_index("wg")
  flags = Flags()

  @pl.when(wg == 0)
  def _():
    o_ref[...] = x_ref[...] * 2.0
    pl.semaphore_signal(flags.full)
    pl.semaphore_wait(flags.empty)

  @pl.when(wg == 1)
  def _():
    pl.semaphore_wait(flags.full)
    pl.semaphore_signal(flags.empty)


def target():
  return plgpu.kernel(body, out_type=X, num_threads=2, thread_name="wg"), (X,), "cuda"
