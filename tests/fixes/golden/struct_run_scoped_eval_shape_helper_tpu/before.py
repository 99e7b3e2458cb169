import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ROWS, COLS = 16, 256


def _centered(x):
  return x - jnp.mean(x, axis=-1, keepdims=True)


def _scratch_for(rows, cols, dtype):
  return jax.eval_shape(_centered, jax.ShapeDtypeStruct((rows, cols), dtype))


def _variance_body(x_ref, o_ref):
  def with_centered(centered):
    centered[...] = _centered(x_ref[...].astype(jnp.float32))
    o_ref[...] = jnp.mean(centered[...] * centered[...], axis=-1, keepdims=True)

  pl.run_scoped(with_centered, _scratch_for(ROWS, COLS, jnp.float32))


@jax.jit
def variance(x):
  return pl.pallas_call(
      _variance_body,
      out_shape=jax.ShapeDtypeStruct((ROWS, 1), jnp.float32),
      compiler_params=pltpu.CompilerParams(),
      interpret=True,
  )(x)


def _x():
  return jnp.arange(ROWS * COLS, dtype=jnp.float32).reshape(ROWS, COLS) % 4


def target():
  return variance, (_x(),), "interpret"


def expected():
  x = np.asarray(_x())
  return np.var(x, axis=-1, keepdims=True)
