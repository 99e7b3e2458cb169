"""The launching function asks get_global for a global array and hands it to the kernel, which reads it."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, bias_ref, o_ref):
  o_ref[...] = x_ref[...] + bias_ref[...]


kernel = plgpu.kernel(body, out_type=X)


def run(x):
  bias = pl.get_global(plgpu.GMEM((128,), jnp.float32))
  return kernel(x, bias)


def target():
  return run, (X,), "cuda"
