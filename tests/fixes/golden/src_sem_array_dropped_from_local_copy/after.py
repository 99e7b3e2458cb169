"""PAL005: a local copy's src_sem is a whole array."""
import functools
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)
T = jax.ShapeDtypeStruct((8, 128), jnp.float32)

def body(x_hbm, o_hbm, sem, sems):
  copy = pltpu.make_async_copy(x_hbm, o_hbm, sem)
  copy.start()
  copy.wait()


def target():
  return pl.pallas_call(body, out_shape=T, in_specs=[pl.BlockSpec(memory_space=pl.ANY)], out_specs=pl.BlockSpec(memory_space=pl.ANY), scratch_shapes=[pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA((2,))], compiler_params=pltpu.CompilerParams()), (T,), "tpu"
