"""A barrier asked of get_global through a local variable: scratch spelled from its value at the launch."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


@plgpu.kernel(out_type=X, scratch_types=[plgpu.Barrier(num_arrivals=1)])
def body(x_ref, o_ref, bar_ref):
  kind = plgpu.Barrier(num_arrivals=1)
  o_ref[...] = x_ref[...] + 1.0


def target():
  return body, (X,), "cuda"
