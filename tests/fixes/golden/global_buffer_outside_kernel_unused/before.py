"""The launching function asks get_global for a buffer it never uses, outside the kernel."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  o_ref[...] = x_ref[...] + 1.0


kernel = plgpu.kernel(body, out_type=X)


def run(x):
  scratch = pl.get_global(jax.ShapeDtypeStruct((128,), jnp.float32))
  return kernel(x)


def target():
  return jax.jit(run), (X,), "cuda"
