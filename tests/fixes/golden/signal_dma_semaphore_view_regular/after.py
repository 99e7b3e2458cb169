"""A TPU kernel that signals and waits on a value read out of a DMA semaphore array (`sems[0]`): the view
sems.at[0] is what is meant, and a DMA semaphore is nothing signal takes either; the kernel starts no copy, so
the array is allocated REGULAR with the same fix."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def body(x_ref, o_ref, sems):
  pl.semaphore_signal(sems.at[0])
  pl.semaphore_wait(sems.at[0])
  o_ref[...] = x_ref[...]


def target():
  kernel = pl.pallas_call(body, out_shape=X,
                          scratch_shapes=[pltpu.SemaphoreType.REGULAR((2,))])
  return kernel, (X,), "tpu"
