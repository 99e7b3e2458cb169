"""PAL017: a local TPU copy given `src_sem=` in a TensorCore kernel.

A copy on one device has no source semaphore on the TensorCore; Mosaic TPU refuses one as it lowers the
copy (jax 0.12):

    NotImplementedError: Source semaphore (`src_sem`) on a local copy without device_id is not implemented on TensorCore.

Fix: drop `src_sem`; `.wait()` waits for the write, which ends after the read.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def copy_kernel(x_hbm, o_hbm, recv_sem, send_sem):
  copy = pltpu.make_async_copy(x_hbm, o_hbm, recv_sem, src_sem=send_sem)
  copy.start()  # wrong: a local copy takes no src_sem on the TensorCore
  copy.wait()


# pallas-lsp: trace(f32[8,128])
copy = pl.pallas_call(copy_kernel, out_shape=X, in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                      out_specs=pl.BlockSpec(memory_space=pl.ANY),
                      scratch_shapes=[pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA])


def target():
  return copy, (X,), "tpu"
