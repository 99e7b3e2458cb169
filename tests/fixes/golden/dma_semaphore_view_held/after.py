"""PAL010: the copy's (receive) semaphore read out of its ref into a variable first."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

T = jax.ShapeDtypeStruct((8, 128), jnp.float32)
ANY = pl.BlockSpec(memory_space=pl.ANY)


def body(x, o, sems):
  done = sems.at[1]
  pltpu.make_async_copy(x, o, done).start()


def target():
  return pl.pallas_call(body, out_shape=T, in_specs=[ANY], out_specs=ANY, scratch_shapes=[pltpu.SemaphoreType.DMA((2,))],
                        compiler_params=pltpu.CompilerParams()), (T,), "tpu"
