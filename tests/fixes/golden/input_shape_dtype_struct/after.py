"""get_global of a jax.ShapeDtypeStruct (no memory space): the BlockSpec gets none either."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

TABLE = jax.ShapeDtypeStruct((2, 64), jnp.int32)


def lookup_kernel(table_ref, x_ref, o_ref):
  o_ref[...] = x_ref[...] + table_ref[...]


def target():
  fn = functools.partial(pl.pallas_call(
      lookup_kernel,
      out_shape=jax.ShapeDtypeStruct((4, 64), jnp.int32),
      grid=(2,),
      in_specs=[
          pl.BlockSpec(TABLE.shape, lambda i: (0, 0)),
          pl.BlockSpec((2, 64), lambda i: (i, 0)),
      ],
      out_specs=pl.BlockSpec((2, 64), lambda i: (i, 0)),
      interpret=True,
  ), jnp.zeros(TABLE.shape, TABLE.dtype))
  return fn, (jnp.full((4, 64), 3, jnp.int32),), "interpret"


def expected():
  return jnp.full((4, 64), 3, jnp.int32)
