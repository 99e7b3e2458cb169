"""A correct use of `pl.get_global`: a global semaphore hands work from one block to the next.

The kernel runs two thread blocks. Block 0 writes the first half of the output and then
signals a semaphore; block 1 waits on that semaphore before it writes the second half, so
the halves are written in a fixed order. JAX zero-initialises the semaphore at the start of
every launch (jax 0.12 source; on an H200, three relaunches each read a count of 0), so nothing
carries over from one launch to the next; a semaphore that must outlive a launch is made with
`plgpu.alloc_semaphore` outside the kernel and passed in.

`pl.get_global(plgpu.SemaphoreType.REGULAR)` is the one form Mosaic GPU accepts: a
semaphore in global memory. pallas-lsp reports nothing here, and JAX lowers it for CUDA.
"""
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

HALF = 128
X = jax.ShapeDtypeStruct((2, HALF), jnp.float32)


def ordered_halves(x_ref, o_ref):
  block = lax.axis_index("block")
  first_half_done = pl.get_global(plgpu.SemaphoreType.REGULAR)

  @pl.when(block == 0)
  def _():
    o_ref[0] = x_ref[0] * 2.0
    pl.semaphore_signal(first_half_done)

  @pl.when(block == 1)
  def _():
    pl.semaphore_wait(first_half_done)
    o_ref[1] = x_ref[1] * 2.0


# pallas-lsp: trace(f32[2,128])
ordered_double = plgpu.kernel(ordered_halves, out_type=X, grid=(2,), grid_names=("block",))


def target():
  return ordered_double, (X,), "cuda"
