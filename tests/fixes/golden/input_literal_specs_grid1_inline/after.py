"""A lookup table fetched with get_global in an interpreted pallas_call, launched inline."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def add_table(table_ref, x_ref, o_ref):
  # zero-initialised by JAX
  o_ref[...] = x_ref[...] + table_ref[...] + 1.0


def add(x):
  return pl.pallas_call(
      add_table,
      out_shape=jax.ShapeDtypeStruct((256,), jnp.float32),
      grid=(2,),
      in_specs=[
        pl.BlockSpec((128,), lambda i: (0,), memory_space=plgpu.GMEM),
        pl.BlockSpec((128,), lambda i: (i,)),
      ],
      out_specs=pl.BlockSpec((128,), lambda i: (i,)),
      interpret=True,
  )(jnp.zeros((128,), jnp.float32), x)


def target():
  return add, (jnp.arange(256, dtype=jnp.float32),), "interpret"


def expected():
  return jnp.arange(256, dtype=jnp.float32) + 1.0
