"""A Mosaic GPU kernel that takes a TPU DMA semaphore from pl.run_scoped to count its own steps: signal and
wait take a REGULAR semaphore, and in a Mosaic GPU kernel it is Mosaic GPU's (a TPU one is refused there)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((256,), jnp.float32)


def body(x_ref, o_ref):
  def counted(steps):
    pl.semaphore_signal(steps, 2)
    pl.semaphore_wait(steps, 2)
  pl.run_scoped(counted, plgpu.SemaphoreType.REGULAR)
  o_ref[...] = x_ref[...] * 2.0


def target():
  return plgpu.kernel(body, out_type=X), (X,), "cuda"
