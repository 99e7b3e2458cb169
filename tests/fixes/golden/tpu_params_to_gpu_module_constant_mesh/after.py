import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

ROWS, COLS = 2, 128
DEBUG_INTERPRETER = plgpu.InterpretGPUParams(
  detect_races=True, out_of_bounds_reads="raise"
)


def shift_rows(x_ref, o_ref):
  row = jax.lax.axis_index("rows")
  o_ref[row] = x_ref[row] + 1.0


def shift(x):
  return pl.kernel(
      shift_rows,
      out_type=jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32),
      mesh=plgpu.Mesh(grid=(ROWS,), grid_names=("rows",)),
      interpret=DEBUG_INTERPRETER,
  )(x)


def _x():
  return jnp.arange(ROWS * COLS, dtype=jnp.float32).reshape(ROWS, COLS)


def target():
  return shift, (_x(),), "interpret"


def expected():
  return np.asarray(_x()) + 1.0
