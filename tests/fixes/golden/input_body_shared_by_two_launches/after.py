"""One body, two pallas_call launches (one inline, one returned): both get the input."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def add_offsets(offsets_ref, x_ref, o_ref):
  o_ref[...] = x_ref[...] + offsets_ref[...] + 2.0


def small(x):
  return pl.pallas_call(add_offsets, out_shape=X, interpret=True)(jnp.zeros((128,), jnp.float32),
                                                                  x)


def tiled():
  return functools.partial(pl.pallas_call(add_offsets, out_shape=X, grid=(1,), in_specs=[pl.BlockSpec((128,), lambda i: (0,), memory_space=plgpu.GMEM), pl.BlockSpec((128,), lambda i: (i,))],
                        interpret=True), jnp.zeros((128,), jnp.float32))


def target():
  return lambda x: small(x) + tiled()(x), (jnp.ones((128,), jnp.float32),), "interpret"


def expected():
  return jnp.full((128,), 6.0, jnp.float32)
