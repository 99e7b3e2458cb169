"""PAL010: src_sem=sem[...] reads the (unshaped) semaphore's value; the ref itself was meant."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

T = jax.ShapeDtypeStruct((8, 128), jnp.float32)
ANY = pl.BlockSpec(memory_space=pl.ANY)


def body(x, o, sem, src):
  pltpu.async_copy(x, o, sem).wait()


def target():
  return pl.pallas_call(body, out_shape=T, in_specs=[ANY], out_specs=ANY, scratch_shapes=[pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA],
                        compiler_params=pltpu.CompilerParams()), (T,), "tpu"
