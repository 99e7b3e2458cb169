"""The SMEM type comes from a method of a frozen descriptor that `dataclasses.replace` derives from a default
built positionally, and the tile goes straight into a helper: JAX sees plgpu.SMEM((32, 128)), the replaced
rows, and refuses it in get_global; run_scoped allocates it for the helper's call."""
import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class Tiles:
  rows: int
  cols: int
  dtype: object = jnp.float32

  def staging(self):
    return plgpu.SMEM((self.rows, self.cols), self.dtype)


DEFAULT_TILES = Tiles(64, 128)


def body(x_gmem, o_gmem, *, tiles):
  block = jax.lax.axis_index("b")
  rows = pl.ds(block * tiles.rows, tiles.rows)

  def scale(tile):
    tile[...] = x_gmem[rows]
    o_gmem[rows] = tile[...] * 3.0

  scale(pl.get_global(tiles.staging()))


def launch(x):
  tiles = dataclasses.replace(DEFAULT_TILES, rows=32)
  kernel = pl.kernel(
      functools.partial(body, tiles=tiles),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      mesh=plgpu.Mesh(grid=(x.shape[0] // tiles.rows,), grid_names=("b",)),
  )
  return kernel(x)


def target():
  return launch, (jax.ShapeDtypeStruct((128, 128), jnp.float32),), "cuda"
