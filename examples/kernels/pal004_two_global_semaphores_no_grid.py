"""PAL004: two global semaphores in a Mosaic GPU kernel without a grid (a JAX bug).

Each `pl.get_global` is fine alone. Without a grid or cluster, JAX 0.12's resource estimator
makes room for one global semaphore while the lowering reserves two, and lowering fails far
from these lines:

    IndexError: Slice DynamicSlice(base=1, length=1) along axis 0 is out of bounds for shape [1]

Fix: one shaped semaphore, `pl.get_global(plgpu.SemaphoreType.REGULAR((2,)))`, used as
`sems.at[0]` and `sems.at[1]`; or give the kernel a grid.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def handshake(x_ref, o_ref):
  ready = pl.get_global(plgpu.SemaphoreType.REGULAR)
  done = pl.get_global(plgpu.SemaphoreType.REGULAR)  # the second one fails
  pl.semaphore_signal(ready)
  pl.semaphore_wait(ready)
  o_ref[...] = x_ref[...] * 2.0
  pl.semaphore_signal(done)
  pl.semaphore_wait(done)


# pallas-lsp: trace(f32[128])
double = plgpu.kernel(handshake, out_type=X)


def target():
  return double, (X,), "cuda"
