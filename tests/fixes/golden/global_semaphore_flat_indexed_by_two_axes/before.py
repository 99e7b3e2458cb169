"""Per-(row, col) block flags from one flat get_global array, signalled and waited as .at[r, c]."""
from jax import lax
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((2, 4, 128), jnp.float32)
ROWS, COLS = 2, 4


def _flags(x_hbm, o_hbm):
  r, c = lax.axis_index("r"), lax.axis_index("c")
  o_hbm[r, c] = x_hbm[r, c] + 1.0
  flags = pl.get_global(plgpu.SemaphoreType.REGULAR((ROWS * COLS,)))
  pl.semaphore_signal(flags.at[r, c])
  pl.semaphore_wait(flags.at[r, c])


def target():
  fn = plgpu.kernel(_flags, out_type=X, grid=(ROWS, COLS), grid_names=("r", "c"))
  return fn, (X,), "cuda"
