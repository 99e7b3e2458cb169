"""The body is bound with functools.partial; the table is used inline, never named."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def shift_kernel(offset, global_ref, x_ref, o_ref, *, scale):
  o_ref[...] = (x_ref[...] + offset + global_ref[...]) * scale


def target():
  fn = functools.partial(pl.pallas_call(functools.partial(shift_kernel, 2.0, scale=3.0),
                      out_shape=jax.ShapeDtypeStruct((64,), jnp.float32),
                      interpret=True), jnp.zeros((64,), jnp.float32))
  return fn, (jnp.ones((64,), jnp.float32),), "interpret"


def expected():
  return jnp.full((64,), 9.0, jnp.float32)
