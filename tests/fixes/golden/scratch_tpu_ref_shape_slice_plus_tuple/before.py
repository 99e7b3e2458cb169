"""Row sums of squares carried across the column steps of a TPU grid, the accumulator typed from a slice of the
input ref's shape (`pltpu.VMEM(x_ref.shape[:-1] + (1,), jnp.float32)`): the launch writes the BlockSpec's rows
as the shape an author would, `(block_rows, 1)`, not the block tuple sliced.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _sumsq_body(x_ref, o_ref):
    col = pl.program_id(1)
    acc = pl.get_global(pltpu.VMEM(x_ref.shape[:-1] + (1,), jnp.float32))

    @pl.when(col == 0)
    def _init():
        acc[...] = jnp.zeros_like(acc)

    x = x_ref[...].astype(jnp.float32)
    acc[...] += jnp.sum(x * x, axis=-1, keepdims=True)

    @pl.when(col == pl.num_programs(1) - 1)
    def _out():
        o_ref[...] = acc[...]


def row_sumsq(x, block_rows=128, block_cols=256):
    rows, cols = x.shape
    return pl.pallas_call(
        _sumsq_body,
        out_shape=jax.ShapeDtypeStruct((rows, 1), jnp.float32),
        grid=(rows // block_rows, cols // block_cols),
        in_specs=[pl.BlockSpec((block_rows, block_cols), lambda i, j: (i, j))],
        out_specs=pl.BlockSpec((block_rows, 1), lambda i, j: (i, 0)),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
    )(x)


def target():
    return row_sumsq, (jnp.ones((256, 512), jnp.bfloat16),), "tpu"
