"""The generic row kernel: one grid step per row block, the body delegated to a transform."""

import jax
from jax.experimental import pallas as pl

from r15_cbk_transforms import RowTransform


def apply_row_transform(x, transform: RowTransform, *, block_rows=8, interpret=True):
  spec = pl.BlockSpec((block_rows, x.shape[1]), lambda i: (i, 0))

  def body(x_ref, o_ref):
    transform(x_ref, o_ref)

  return pl.pallas_call(
      body,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(x.shape[0] // block_rows,),
      in_specs=[spec],
      out_specs=spec,
      interpret=interpret,
      name=f"row_{transform.name}",
  )(x)
