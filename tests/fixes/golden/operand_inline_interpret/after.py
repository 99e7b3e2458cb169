"""plgpu.kernel in interpret mode, called where it is built."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(acc_ref, x_ref, o_ref):
  o_ref[...] = x_ref[...] * 2.0 + acc_ref[...]


def double(x):
  return plgpu.kernel(
    body, out_type=X, interpret=True
  )(jnp.zeros((128,), jnp.float32), x)


def target():
  return double, (jnp.arange(128, dtype=jnp.float32),), "interpret"


def expected():
  return jnp.arange(128, dtype=jnp.float32) * 2.0
