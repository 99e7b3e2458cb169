"""PAL016: a scratch semaphore in a kernel JAX's GPU interpreter runs.

The GPU interpreter (`interpret=plgpu.InterpretGPUParams()`, `plgpu.force_gpu_interpret_mode()`) fills
every buffer it allocates with NaN, which a semaphore cannot hold: a REGULAR semaphore in `scratch_types`
(or from `pl.run_scoped`) fails as the kernel starts, even one the body never uses:

    NotImplementedError: nan + semaphore

Fix: run the kernel with `interpret=True` (which runs scratch semaphores), or compiled on a GPU.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def add_one(x_ref, o_ref, sem):
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem)
  o_ref[...] = x_ref[...] + 1.0


kernel = plgpu.kernel(add_one, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR],
                      interpret=plgpu.InterpretGPUParams())


# pallas-lsp: trace(f32[128])
def run(x):
  return kernel(x)  # wrong: the GPU interpreter allocates no semaphore


def target():
  return run, (jnp.ones((128,), jnp.float32),), "interpret"
