"""A global semaphore hands work from one block to the next: the one get_global Mosaic GPU accepts."""
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
