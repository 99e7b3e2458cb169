"""A frozen dataclass whose `__post_init__` derives the SMEM staging tile type from its tile
shape; the kernel class's body asks get_global for it. It becomes scratch of the launch, typed by the same attribute."""
import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class TileLayout:
  rows: int
  cols: int
  staging: Any = dataclasses.field(init=False, repr=False)

  def __post_init__(self):
    object.__setattr__(self, "staging", plgpu.SMEM((self.rows, self.cols), jnp.float32))


class Square:
  def __init__(self, layout: TileLayout):
    self.layout = layout

  def _body(self, x_gmem, o_gmem, tile):
    tile[...] = x_gmem[...] * x_gmem[...]
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(tile, o_gmem)
    plgpu.wait_smem_to_gmem(0)

  def __call__(self, x):
    return plgpu.kernel(
      self._body,
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      scratch_types=[self.layout.staging],
    )(x)


def target():
  return Square(TileLayout(64, 128)), (jax.ShapeDtypeStruct((64, 128), jnp.float32),), "cuda"
