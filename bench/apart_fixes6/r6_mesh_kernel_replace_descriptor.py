"""Residual add + clamp over a `plgpu.Mesh`, tiles described by frozen descriptors.

`BASE_DESCRIPTOR` holds the defaults of the family; a launch derives its own with
`dataclasses.replace` (row count, dtype) and asks it for the shared-memory staging type.  The body
copies each row block through SMEM so the clamp runs on the staged, already-summed values.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

# fix-rate: kind=run_scoped meaning=preserving


@dataclasses.dataclass(frozen=True)
class TileDescriptor:
  rows: int = 64
  cols: int = 128
  dtype: jnp.dtype = jnp.dtype(jnp.float32)
  clamp: float = 6.0

  @property
  def staging_type(self):
    return plgpu.SMEM((self.rows, self.cols), self.dtype)

  def blocks(self, total_rows: int) -> int:
    return total_rows // self.rows


BASE_DESCRIPTOR = TileDescriptor()


def _residual_clamp_body(x_gmem, r_gmem, o_gmem, *, desc: TileDescriptor, num_blocks: int):
  block = jax.lax.axis_index("blocks")
  rows = pl.ds(block * desc.rows, desc.rows)

  def stage_and_clamp(staged):
    staged[...] = x_gmem[rows] + r_gmem[rows]
    o_gmem[rows] = jnp.clip(staged[...], -desc.clamp, desc.clamp)

  stage_and_clamp(pl.get_global(desc.staging_type))


def residual_clamp(x: jax.Array, residual: jax.Array, clamp: float = 6.0) -> jax.Array:
  desc = dataclasses.replace(BASE_DESCRIPTOR, cols=x.shape[1], dtype=jnp.dtype(x.dtype), clamp=clamp)
  num_blocks = desc.blocks(x.shape[0])
  kernel = pl.kernel(
      functools.partial(_residual_clamp_body, desc=desc, num_blocks=num_blocks),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      mesh=plgpu.Mesh(grid=(num_blocks,), grid_names=("blocks",)),
  )
  return kernel(x, residual)


def target():
  spec = jax.ShapeDtypeStruct((256, 128), jnp.float32)
  return residual_clamp, (spec, spec), "cuda"


if __name__ == "__main__":
  x = jnp.full((256, 128), 5.0)
  print(residual_clamp(x, x)[0, :4])
