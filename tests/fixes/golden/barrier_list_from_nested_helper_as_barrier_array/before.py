"""A kernel class's body makes its chunk barriers with a nested helper returning a list comprehension of
get_globals, sized by `self.chunks`: the helper goes, the launch's scratch list gets one barrier array."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


class ChunkedCopy:
  def __init__(self, chunks: int, rows: int = 32, cols: int = 128):
    self.chunks, self.rows, self.cols = chunks, rows, cols

  def _body(self, x_gmem, o_gmem, tiles):
    def chunk_barriers():
      return [pl.get_global(plgpu.Barrier(num_arrivals=1)) for _ in range(self.chunks)]

    landed = chunk_barriers()
    for c in range(self.chunks):
      plgpu.copy_gmem_to_smem(x_gmem.at[c], tiles.at[c], landed[c])
    for c in range(self.chunks):
      plgpu.barrier_wait(landed[c])
      tiles[c] = tiles[c] + 1.0
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(tiles, o_gmem)
    plgpu.wait_smem_to_gmem(0)

  def __call__(self, x):
    return plgpu.kernel(self._body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
                        scratch_types=[plgpu.SMEM((self.chunks, self.rows, self.cols), jnp.float32)])(x)


def target():
  return ChunkedCopy(3), (jax.ShapeDtypeStruct((3, 32, 128), jnp.float32),), "cuda"
