"""A barrier asked of get_global through a local variable: scratch spelled from its value at the launch."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


@plgpu.kernel(out_type=X)
def body(x_ref, o_ref):
  kind = plgpu.Barrier(num_arrivals=1)
  bar = pl.get_global(kind)
  o_ref[...] = x_ref[...] + 1.0


def target():
  return body, (X,), "cuda"
