"""The semaphore type comes from a helper whose literal argument picks the branch (`sync_kind(role="arrivals")`),
only signalled and waited on: the branch that gives BARRIER is the one to change, the helper serving only
this get_global."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((256,), jnp.float32)


def sync_kind(role: str = "tma", stages: int = 1):
  if role == "tma":
    return plgpu.Barrier(num_arrivals=stages)
  elif role == "arrivals":
    return plgpu.SemaphoreType.BARRIER
  raise ValueError(role)


def body(x_ref, o_ref, *, blocks):
  i = jax.lax.axis_index("b")
  arrivals = pl.get_global(sync_kind(role="arrivals"))
  o_ref[pl.ds(i * 128, 128)] = x_ref[pl.ds(i * 128, 128)] * 2.0

  @pl.when(i != 0)
  def _():
    pl.semaphore_signal(arrivals)

  @pl.when(i == 0)
  def _():
    pl.semaphore_wait(arrivals, blocks - 1)


def target():
  kernel = plgpu.kernel(functools.partial(body, blocks=2), out_type=X, grid=(2,), grid_names=("b",))
  return kernel, (X,), "cuda"
