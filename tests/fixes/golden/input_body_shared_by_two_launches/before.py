"""One body, two pallas_call launches (one inline, one returned): both get the input."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def add_offsets(x_ref, o_ref):
  offsets = pl.get_global(plgpu.GMEM((128,), jnp.float32))
  o_ref[...] = x_ref[...] + offsets[...] + 2.0


def small(x):
  return pl.pallas_call(add_offsets, out_shape=X, interpret=True)(x)


def tiled():
  return pl.pallas_call(add_offsets, out_shape=X, grid=(1,), in_specs=[pl.BlockSpec((128,), lambda i: (i,))],
                        interpret=True)


def target():
  return lambda x: small(x) + tiled()(x), (jnp.ones((128,), jnp.float32),), "interpret"


def expected():
  return jnp.full((128,), 6.0, jnp.float32)
