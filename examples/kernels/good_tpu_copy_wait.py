"""Correct (the look-alike of PAL010 and PAL013): a TPU copy signals its DMA semaphore, given as
the ref, and is waited on through the copy itself.

pallas-lsp reports nothing, and JAX lowers it for a TPU.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def copy_kernel(x_hbm, o_hbm, sem):
  copy = pltpu.make_async_copy(x_hbm, o_hbm, sem)
  copy.start()
  copy.wait()


# pallas-lsp: trace(f32[8,128])
copy = pl.pallas_call(copy_kernel, out_shape=X, in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                      out_specs=pl.BlockSpec(memory_space=pl.ANY), scratch_shapes=[pltpu.SemaphoreType.DMA])


def target():
  return copy, (X,), "tpu"
