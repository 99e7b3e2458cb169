"""A REGULAR semaphore in a pl.kernel on a one-block Mosaic GPU mesh, run with interpret=True: pl.kernel
takes scratch_types when interpreted (compiled, Mosaic GPU takes none, and the fix is not offered)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, sem_ref):
  pl.semaphore_signal(sem_ref)
  pl.semaphore_wait(sem_ref)
  o_ref[...] = x_ref[...] + 1.0


def target():
  fn = pl.kernel(
    body,
    out_type=X,
    mesh=plgpu.Mesh(),
    interpret=True,
    scratch_types=[plgpu.SemaphoreType.REGULAR],
  )
  return fn, (jnp.zeros((128,), jnp.float32),), "interpret"


def expected():
  return jnp.ones((128,), jnp.float32)
