"""PAL029: a list of DMA semaphore types as one scratch entry, indexed as a semaphore array.

`[pltpu.SemaphoreType.DMA] * 2` gives the body a Python list of two refs, not an array:

    AttributeError: 'list' object has no attribute 'at'

Fix: `pltpu.SemaphoreType.DMA((2,))`, one shaped semaphore.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def double(x_hbm, o_ref, buf, sems):
  copy = pltpu.make_async_copy(x_hbm, buf, sems.at[0])
  copy.start()
  copy.wait()
  o_ref[...] = buf[...] * 2.0


# pallas-lsp: trace(f32[8,128])
def run(x):
  scratch = [pltpu.VMEM((8, 128), jnp.float32), [pltpu.SemaphoreType.DMA] * 2]  # wrong: a list of types
  return pl.pallas_call(double, out_shape=X, in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                        scratch_shapes=scratch)(x)


def target():
  return run, (X,), "tpu"
