"""The body calls a helper of another module, which stages the input in SMEM asked of get_global."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

from staging import staged

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  o_ref[...] = staged(x_ref) + 1.0


kernel = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",))


def target():
  return kernel, (X,), "cuda"
