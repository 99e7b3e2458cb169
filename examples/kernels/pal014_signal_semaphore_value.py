"""PAL014: `pl.semaphore_signal` given the value read out of a semaphore (`sem[...]`), not the ref.

JAX refuses it while it traces the kernel, on every backend:

    ValueError: Cannot signal on a non-semaphore Ref: semaphore[]

Fix: `pl.semaphore_signal(sem)`.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, sem):
  pl.semaphore_signal(sem[...])  # wrong: the ref, sem, was meant
  o_ref[...] = x_ref[...] + 1.0


# pallas-lsp: trace(f32[128])
add_one = plgpu.kernel(body, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR])


def target():
  return add_one, (X,), "cuda"
