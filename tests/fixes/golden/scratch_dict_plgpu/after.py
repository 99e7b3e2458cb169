"""scratch_types given as a dict: the new buffer arrives as a keyword."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)
SMEM_TILE = plgpu.SMEM((128,), jnp.float32)


def body(x_ref, o_ref, *, stage, tile):
  stage[...] = x_ref[...]
  tile[...] = stage[...] + 1.0
  o_ref[...] = tile[...]


def target():
  return plgpu.kernel(
    body, out_type=X, scratch_types={"stage": SMEM_TILE, "tile": SMEM_TILE}
  ), (X,), "cuda"
