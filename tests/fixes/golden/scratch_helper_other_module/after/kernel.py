"""The body calls a helper of another module, which stages the input in SMEM asked of get_global."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

from staging import staged

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, tile):
  o_ref[...] = staged(x_ref, tile) + 1.0


kernel = plgpu.kernel(
  body,
  out_type=X,
  grid=(2,),
  grid_names=("x",),
  scratch_types=[plgpu.SMEM((128,), jnp.float32)],
)


def target():
  return kernel, (X,), "cuda"
