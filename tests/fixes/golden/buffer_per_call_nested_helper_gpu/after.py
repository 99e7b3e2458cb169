"""A helper nested in the body stages an operand in an SMEM tile from get_global and returns it; the body calls it
for both operands and reads both tiles afterwards. One scratch tile per call (one would alias the two)."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((64, 128), jnp.float32)


def body(a_gmem, b_gmem, o_gmem, out_smem, a_tile, b_tile):
  def staged(src, tile):
    tile[...] = src[...] * 2.0
    return tile

  a = staged(a_gmem, a_tile)
  b = staged(b_gmem, b_tile)
  out_smem[...] = a[...] - b[...]
  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(out_smem, o_gmem)
  plgpu.wait_smem_to_gmem(0)


def target():
  kernel = plgpu.kernel(
    body,
    out_type=X,
    scratch_types=[
      plgpu.SMEM((64, 128), jnp.float32),
      plgpu.SMEM((64, 128), jnp.float32),
      plgpu.SMEM((64, 128), jnp.float32),
    ],
  )
  return kernel, (X, X), "cuda"
