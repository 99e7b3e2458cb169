"""pl.semaphore_signal and pl.semaphore_wait both given sem[...], the value read out of a pl.run_scoped
semaphore: JAX stops at the signal, and the wait would fail next for the same reason, so both pass the ref."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  def scoped(sem):
    pl.semaphore_signal(sem)
    pl.semaphore_wait(sem)
  pl.run_scoped(scoped, plgpu.SemaphoreType.REGULAR)
  o_ref[...] = x_ref[...] + 1.0


def target():
  return plgpu.kernel(body, out_type=X), (X,), "cuda"
