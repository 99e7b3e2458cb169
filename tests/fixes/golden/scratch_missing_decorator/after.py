"""The decorator form without scratch_types: the keyword is added to the decorator."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


@plgpu.kernel(out_type=X, scratch_types=[plgpu.SMEM((128,), jnp.float32)])
def kernel(x_ref, o_ref, tmp_ref):
  tmp_ref[...] = x_ref[...]
  o_ref[...] = tmp_ref[...]


def target():
  return kernel, (X,), "cuda"
