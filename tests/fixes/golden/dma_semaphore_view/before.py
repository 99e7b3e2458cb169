"""A copy's semaphore read out of the array (sems[0]) where the view sems.at[0] was meant."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

T = jax.ShapeDtypeStruct((8, 128), jnp.float32)
ANY = pl.BlockSpec(memory_space=pl.ANY)


def body(x, o, sems):
  copy = pltpu.make_async_copy(x, o, sems[0])  # the first of two
  copy.start()
  copy.wait()


def target():
  return pl.pallas_call(body, out_shape=T, in_specs=[ANY], out_specs=ANY,
                        scratch_shapes=[pltpu.SemaphoreType.DMA((2,))]), (T,), "tpu"
