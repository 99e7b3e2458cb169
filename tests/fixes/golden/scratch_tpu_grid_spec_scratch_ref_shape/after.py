"""A VMEM buffer shaped like a scratch ref of a `PrefetchScalarGridSpec` (`pltpu.VMEM(rows_vmem.shape,
jnp.float32)`): the grid spec gets it, with the shape that spec's own scratch type writes, `(block_rows, d)`.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _gather_body(idx_ref, x_ref, o_ref, rows_vmem, acc):
    rows_vmem[...] = x_ref[...]
    acc[...] = rows_vmem[...].astype(jnp.float32) * 2.0
    o_ref[...] = acc[...].astype(o_ref.dtype)


def gather(idx, x, block_rows=8):
    n, d = x.shape
    return pl.pallas_call(
        _gather_body,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1,
            grid=(n // block_rows,),
            in_specs=[pl.BlockSpec((block_rows, d), lambda i, idx: (idx[i], 0))],
            out_specs=pl.BlockSpec((block_rows, d), lambda i, idx: (i, 0)),
            scratch_shapes=[
                pltpu.VMEM((block_rows, d), x.dtype),
                pltpu.VMEM((block_rows, d), jnp.float32),
            ],
        ),
    )(idx, x)


def target():
    return gather, (jnp.arange(4, dtype=jnp.int32), jnp.ones((32, 128), jnp.float32)), "tpu"
