"""PAL028: plgpu.alloc_semaphore() called inside a Mosaic GPU kernel's body.

alloc_semaphore makes a semaphore on the host, for the caller to pass in; in a kernel body:

    NotImplementedError: Unimplemented primitive in Pallas Mosaic GPU lowering: to_edtype ...

Fix: `pl.get_global(plgpu.SemaphoreType.REGULAR)`, the kernel's global semaphore.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((256,), jnp.float32)


def handoff(x_ref, o_ref):
  b = jax.lax.axis_index("b")
  ready = plgpu.alloc_semaphore()  # wrong: a host-side allocation

  @pl.when(b == 0)
  def _():
    o_ref[...] = x_ref[...] * 2.0
    pl.semaphore_signal(ready)

  @pl.when(b == 1)
  def _():
    pl.semaphore_wait(ready)


# pallas-lsp: trace(f32[256])
def run(x):
  return plgpu.kernel(handoff, out_type=X, grid=(2,), grid_names=("b",))(x)


def target():
  return run, (X,), "cuda"
