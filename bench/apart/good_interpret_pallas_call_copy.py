"""A CPU test harness that interprets a plain copy kernel."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl


def plain_copy(x_ref, o_ref):
  o_ref[...] = x_ref[...]


@functools.partial(jax.jit, static_argnames=("interpret",))
def run(x, interpret=True):
  return pl.pallas_call(
      plain_copy,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      interpret=interpret,
  )(x)


def target():
  return run, (jnp.arange(64, dtype=jnp.float32),), "interpret"


if __name__ == "__main__":
  x = jnp.arange(64, dtype=jnp.float32)
  np.testing.assert_allclose(run(x), x)
