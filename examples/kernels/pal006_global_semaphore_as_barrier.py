"""PAL006: a global semaphore waited on as if it were a barrier.

`plgpu.barrier_wait` takes a `plgpu.Barrier` from the kernel's scratch, not a semaphore from
`pl.get_global`. JAX fails when it lowers the kernel:

    ValueError: barrier must be a SMEM reference, got Ref<gmem>{semaphore[]}

Fix: allocate a barrier,
`scratch_types=[plgpu.Barrier(num_arrivals=1)]`, or synchronise through the semaphore with
`pl.semaphore_signal` / `pl.semaphore_wait`.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  sem = pl.get_global(plgpu.SemaphoreType.REGULAR)
  plgpu.barrier_wait(sem)  # wrong: a semaphore is no barrier
  o_ref[...] = x_ref[...]


# pallas-lsp: trace(f32[128])
copy = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",))


def target():
  return copy, (X,), "cuda"
