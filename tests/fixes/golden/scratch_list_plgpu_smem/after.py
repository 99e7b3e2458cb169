"""Block-local SMEM from get_global; the kernel already has scratch_types as a list."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, stage, tile):
  stage[...] = x_ref[...]
  tile[...] = stage[...] * 2.0
  o_ref[...] = tile[...]


def target():
  kernel = plgpu.kernel(
      body,
      out_type=X,
      scratch_types=[
          plgpu.SMEM((128,), jnp.float32),  # staging buffer
          plgpu.SMEM((128,), jnp.float32),
      ],
  )
  return kernel, (X,), "cuda"
