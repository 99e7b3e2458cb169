"""PAL015: a TPU copy with a REGULAR send semaphore (src_sem=): .wait() waits for the read on it first and fails."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def copy_kernel(x_hbm, o_hbm, send_sem, recv_sem):
  copy = pltpu.make_async_copy(x_hbm, o_hbm, recv_sem)
  copy.start()
  copy.wait()


copy = pl.pallas_call(copy_kernel, out_shape=X, in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                      out_specs=pl.BlockSpec(memory_space=pl.ANY),
                      scratch_shapes=[pltpu.SemaphoreType.REGULAR, pltpu.SemaphoreType.DMA])


def target():
  return copy, (X,), "tpu"
