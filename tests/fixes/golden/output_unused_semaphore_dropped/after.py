"""A semaphore in a pallas_call's out_shape that the body never uses: it is dropped, with its parameter."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  o_ref[...] = x_ref[...] + 1.0


def target():
  kernel = pl.pallas_call(body, out_shape=(X,))
  return kernel, (X,), "triton"
