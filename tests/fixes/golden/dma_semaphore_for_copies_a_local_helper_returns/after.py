"""PAL015: a REGULAR semaphore array given to the copies a local helper returns (`page_copy(p).wait()`)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((2, 8, 128), jnp.float32)


def body(x_hbm, o_ref, slots, sems):
  def page_copy(p):
    return pltpu.make_async_copy(x_hbm.at[p], slots.at[p], sems.at[p])

  page_copy(0).start()
  page_copy(1).start()
  page_copy(0).wait()
  page_copy(1).wait()
  o_ref[...] = slots[...]


def target():
  return pl.pallas_call(
      body, out_shape=X, in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      scratch_shapes=[
        pltpu.VMEM((2, 8, 128), jnp.float32), pltpu.SemaphoreType.DMA((2,))
      ],
  ), (X,), "tpu"
