"""Helpers a kernel file imports: the block size table and a launch builder."""
import jax
from jax.experimental import pallas as pl

BLOCKS = {"small": 64, "large": 128}


def row_spec(block):
    return pl.BlockSpec((block,), lambda i: (i,))


def launch(body, x, block):
    return pl.pallas_call(
        body,
        grid=(x.shape[0] // block,),
        in_specs=[row_spec(block)],
        out_specs=row_spec(block),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
    )(x)
