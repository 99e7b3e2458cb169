"""PAL013: a DMA semaphore signalled and waited on, from a NamedTuple classmethod splatted into scratch_shapes."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


class StepSems(NamedTuple):
  copy: object
  ready: object

  @classmethod
  def scratch(cls):
    return list(cls(copy=pltpu.SemaphoreType.DMA, ready=pltpu.SemaphoreType.REGULAR))


def body(x_ref, o_hbm, tile_ref, copy_sem, ready_sem):
  tile_ref[...] = x_ref[...] * 2.0
  out = pltpu.make_async_copy(tile_ref, o_hbm, copy_sem)
  out.start()
  out.wait()
  pl.semaphore_signal(ready_sem)
  pl.semaphore_wait(ready_sem)


def target():
  return pl.pallas_call(
      body, out_shape=X, out_specs=pl.BlockSpec(memory_space=pl.ANY),
      scratch_shapes=[pltpu.VMEM((8, 128), jnp.float32), *StepSems.scratch()],
      compiler_params=pltpu.CompilerParams(has_side_effects=True),
  ), (X,), "tpu"
