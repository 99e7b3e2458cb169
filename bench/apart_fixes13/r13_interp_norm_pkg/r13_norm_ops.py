"""`center_affine(x, gamma, beta)`: TPU Pallas op, interpreted off-TPU."""

import functools

import jax
from jax.experimental import pallas as pl

import r13_norm_kernel as kernel
from r13_norm_workspace import Workspace

_VMEM_BUDGET = 4 * 1024 * 1024


def _block_rows(rows: int, cols: int) -> int:
  for br in (256, 128, 64, 32, 16, 8):
    if rows % br == 0 and Workspace(br, cols).bytes <= _VMEM_BUDGET:
      return br
  raise ValueError(f"no block size fits rows={rows}, cols={cols}")


@functools.partial(jax.jit, static_argnames=("interpret",))
def center_affine(x, gamma, beta, interpret: bool = False):
  rows, cols = x.shape
  ws = Workspace(_block_rows(rows, cols), cols)
  row_spec = pl.BlockSpec((ws.block_rows, cols), lambda i: (i, 0))
  vec_spec = pl.BlockSpec((1, cols), lambda i: (0, 0))
  return pl.pallas_call(
      functools.partial(kernel.centering_kernel, ws),
      grid=(rows // ws.block_rows,),
      in_specs=[row_spec, vec_spec, vec_spec],
      out_specs=row_spec,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      interpret=interpret,
  )(x, gamma.reshape(1, cols), beta.reshape(1, cols))
