"""A TPU double-buffered load; the second slot's semaphore is read out of the semaphore array."""
# fix-rate: kind=ref_view meaning=preserving

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

SHAPE = (16, 128)


def load_halves(x_hbm, o_ref, slots, sems):
  first = pltpu.make_async_copy(x_hbm.at[0:8], slots.at[0], sems.at[0])
  second = pltpu.make_async_copy(x_hbm.at[8:16], slots.at[1], sems[1])
  first.start()
  second.start()
  first.wait()
  second.wait()
  o_ref[0:8] = slots[0]
  o_ref[8:16] = slots[1]


def target():
  x = jax.ShapeDtypeStruct(SHAPE, jnp.float32)
  fn = pl.pallas_call(
      load_halves,
      out_shape=x,
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      scratch_shapes=[pltpu.VMEM((2, 8, 128), jnp.float32), pltpu.SemaphoreType.DMA((2,))],
  )
  return fn, (x,), "tpu"
