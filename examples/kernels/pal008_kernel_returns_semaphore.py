"""PAL008: a semaphore among a kernel's outputs.

A semaphore lives only while its kernel runs: JAX refuses one in `out_type` (or a
`pallas_call`'s `out_shape`), here as soon as the kernel is built:

    ValueError: Kernels cannot return semaphores. Allocate them as scratch if only used inside
    this kernel, or via plgpu.alloc_semaphore before the kernels that use them.

Fix: drop it from the outputs and
allocate what the kernel needs inside it (`scratch_types=[plgpu.SemaphoreType.REGULAR]`, or
`pl.get_global` for one shared by every block).
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, sem_ref):
  pl.semaphore_signal(sem_ref)
  o_ref[...] = x_ref[...]


# pallas-lsp: trace(f32[128])
copy = plgpu.kernel(body, out_type=(X, plgpu.SemaphoreType.REGULAR))  # wrong: a semaphore output


def target():
  return copy, (X,), "cuda"
