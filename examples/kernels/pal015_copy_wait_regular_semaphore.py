"""PAL015: a TPU copy waited on through its descriptor (`.wait()`) with a REGULAR semaphore.

A copy's `.wait()` binds `dma_wait`, which takes a DMA semaphore only. A copy started with a
REGULAR semaphore (TPU v6 and later) is waited on with `pl.semaphore_wait`. JAX refuses it while
it traces the kernel:

    ValueError: dma_wait requires a DMA semaphore, but got a regular semaphore. Use pl.semaphore_wait() instead.

Fix: allocate a `pltpu.SemaphoreType.DMA` for the copy and keep `.wait()`.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def copy_kernel(x_hbm, o_hbm, sem):
  copy = pltpu.make_async_copy(x_hbm, o_hbm, sem)
  copy.start()
  copy.wait()  # wrong: sem is REGULAR


# pallas-lsp: trace(f32[8,128])
copy = pl.pallas_call(copy_kernel, out_shape=X, in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                      out_specs=pl.BlockSpec(memory_space=pl.ANY), scratch_shapes=[pltpu.SemaphoreType.REGULAR])


def target():
  return copy, (X,), "tpu"
