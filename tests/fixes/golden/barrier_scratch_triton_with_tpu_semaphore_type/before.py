"""A TPU semaphore used as a barrier in a Triton pl.pallas_call, beside a TPU semaphore only signalled and
waited on: launched with plgpu.kernel for the barrier (Triton has none), the other get_global must also
become a type Mosaic GPU allocates (PAL001 then), a REGULAR global semaphore: one fix for both."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  ready = pl.get_global(pltpu.SemaphoreType.REGULAR)
  plgpu.barrier_arrive(ready)
  plgpu.barrier_wait(ready)
  done = pl.get_global(pltpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(done)
  pl.semaphore_wait(done)
  o_ref[...] = x_ref[...] + 1.0


def target():
  fn = pl.pallas_call(body, out_shape=X, grid=(2,))
  return fn, (X,), "triton"
