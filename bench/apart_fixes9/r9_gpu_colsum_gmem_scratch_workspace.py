"""Two-phase weighted rows feeding a later column sum (Mosaic GPU).

Phase one writes each block's rows, pre-scaled by the per-block weight, into a global-memory
workspace; phase two (run by the same block, after a fence) reads its workspace rows back,
adds the bias and stores them to the output. The workspace is the scratch buffer a later
cross-block reduction will read, which is why it lives in GMEM rather than SMEM.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import ClassVar

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

# fix-rate: kind=output meaning=preserving


@dataclasses.dataclass(frozen=True)
class ColsumSpec:
  rows: int
  cols: int
  block_rows: int = 128

  AXIS: ClassVar[str] = "row_blocks"

  @property
  def num_blocks(self) -> int:
    return self.rows // self.block_rows

  def workspace(self):
    return plgpu.GMEM((self.rows, self.cols), jnp.float32)


def _two_phase_body(x_ref, w_ref, b_ref, o_ref, ws_ref, *, spec: ColsumSpec):
  block = jax.lax.axis_index(ColsumSpec.AXIS)
  rows = pl.ds(block * spec.block_rows, spec.block_rows)
  # Phase one: weighted rows into the workspace.
  ws_ref[rows, :] = x_ref[rows, :] * w_ref[rows, :]
  # Phase two: bias added on the way out.
  o_ref[rows, :] = ws_ref[rows, :] + b_ref[rows, :]


def weighted_rows(x, w, b):
  spec = ColsumSpec(rows=x.shape[0], cols=x.shape[1])
  return plgpu.kernel(
      functools.partial(_two_phase_body, spec=spec),
      out_type=jax.ShapeDtypeStruct(x.shape, jnp.float32),
      scratch_types=[spec.workspace()],
      grid=(spec.num_blocks,),
      grid_names=(ColsumSpec.AXIS,),
  )(x, w, b)


def target():
  spec = jax.ShapeDtypeStruct((512, 128), jnp.float32)
  return weighted_rows, (spec, spec, spec), "cuda"


def weighted_rows_reference(x, w, b):
  return x * w + b


def column_sums(x, w, b):
  """The full stage: weighted rows from the kernel, then the column reduction in XLA."""
  return jnp.sum(weighted_rows(x, w, b), axis=0)


def _validate(x, w, b):
  if not (x.shape == w.shape == b.shape):
    raise ValueError(f"shape mismatch: {x.shape}, {w.shape}, {b.shape}")
  if x.shape[0] % ColsumSpec(rows=x.shape[0], cols=x.shape[1]).block_rows:
    raise ValueError("rows must be a multiple of the block size")


if __name__ == "__main__":
  x = jnp.ones((512, 128), jnp.float32)
  w = x * 2
  _validate(x, w, x)
  print(column_sums(x, w, x)[:4], jnp.sum(weighted_rows_reference(x, w, x), axis=0)[:4])
