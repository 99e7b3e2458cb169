"""PAL013: `pl.semaphore_wait` on a TPU DMA semaphore.

A DMA semaphore is signalled by its copy and waited on through that copy (`copy.wait()`);
`pl.semaphore_signal` / `pl.semaphore_wait` take REGULAR or BARRIER semaphores only. JAX
refuses it while it traces the kernel:

    ValueError: Must wait semaphores of the following types: {...}. Got dma_sem.

Fix: keep the copy and wait on it, `copy = pltpu.make_async_copy(...); copy.start(); copy.wait()`.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def copy_kernel(x_hbm, o_hbm, sem):
  pltpu.make_async_copy(x_hbm, o_hbm, sem).start()
  pl.semaphore_wait(sem)  # wrong: wait through the copy


# pallas-lsp: trace(f32[8,128])
copy = pl.pallas_call(copy_kernel, out_shape=X, in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                      out_specs=pl.BlockSpec(memory_space=pl.ANY), scratch_shapes=[pltpu.SemaphoreType.DMA])


def target():
  return copy, (X,), "tpu"
