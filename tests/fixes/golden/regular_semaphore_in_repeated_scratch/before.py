"""Copy a block into VMEM, then count the step as done on a flag the same core waits on; both semaphores come
from one repeated scratch list, run by the TPU interpreter."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _copy_then_flag(x_hbm, o_ref, copy_sem, done):
  fetch = pltpu.make_async_copy(x_hbm, o_ref, copy_sem)
  fetch.start()
  fetch.wait()
  pl.semaphore_signal(done, 1)
  pl.semaphore_wait(done, 1)
  o_ref[...] = o_ref[...] * 2.0


def copy_twice(x):
  return pl.pallas_call(
      _copy_then_flag,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
      scratch_shapes=(pltpu.SemaphoreType.DMA,) * 2,
      interpret=pltpu.InterpretParams(),
  )(x)


def _x():
  return np.arange(8 * 128, dtype=np.float32).reshape(8, 128)


def target():
  return copy_twice, (jnp.asarray(_x()),), "interpret"


def expected():
  return _x() * 2.0
