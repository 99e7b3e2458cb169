"""A helper nested in the body, called twice, widens each input into a VMEM buffer from get_global and
returns values read from it, not the buffer: each call is done with its buffer when it returns, so one
scratch buffer used by both calls in turn computes the same."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ROWS, LANES = 8, 128


def weighted_sum(x, y, weight=0.25):
  def body(x_ref, y_ref, o_ref, wide_ref):
    def widened(src):
      wide_ref[...] = src[...].astype(jnp.float32)
      return wide_ref[...] * 2.0

    first = widened(x_ref)
    second = widened(y_ref)
    o_ref[...] = weight * first + (1.0 - weight) * second

  spec = pl.BlockSpec((ROWS, LANES), lambda i: (i, 0))
  return pl.pallas_call(
      body,
      out_shape=jax.ShapeDtypeStruct(x.shape, jnp.float32),
      grid=(x.shape[0] // ROWS,),
      in_specs=[spec, spec],
      out_specs=spec,
      interpret=True,
      scratch_shapes=[pltpu.VMEM((ROWS, LANES), jnp.float32)],
  )(x, y)


def _data():
  return np.arange(16 * LANES, dtype=np.float32).reshape(16, LANES) % 32


def target():
  x = jnp.asarray(_data(), jnp.bfloat16)
  return weighted_sum, (x, x + 1), "interpret"


def expected():
  x = _data()
  return 0.25 * 2.0 * x + 0.75 * 2.0 * (x + 1)
