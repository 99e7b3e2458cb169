"""The split async copy: one pallas_call starts a DMA and returns its semaphore, the next waits on it."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

MODE = "tpu"
X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def start_body(x_ref, o_ref, sem):
  pltpu.make_async_copy(x_ref, o_ref, sem.at[0]).start()


def wait_body(x_ref, sem, o_ref):
  pltpu.make_async_copy(x_ref, o_ref, sem.at[0]).wait()


def target():
  start = pl.pallas_call(start_body, out_shape=(X, pltpu.SemaphoreType.DMA((2,))),
                         in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                         out_specs=(pl.BlockSpec(memory_space=pl.ANY), pl.BlockSpec(memory_space=pl.ANY)))
  wait = pl.pallas_call(wait_body, out_shape=X,
                        in_specs=[pl.BlockSpec(memory_space=pl.ANY), pl.BlockSpec(memory_space=pl.ANY)],
                        out_specs=pl.BlockSpec(memory_space=pl.ANY), input_output_aliases={0: 0})

  def run(x):
    y, sem = start(x)
    return wait(y, sem)
  return jax.jit(run), (X,), "tpu"
