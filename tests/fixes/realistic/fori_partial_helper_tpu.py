"""A TPU column-sum kernel that walks its block in row chunks with fori_loop; the chunk step, bound with
functools.partial, takes its accumulator itself."""
# fix-rate: kind=scratch meaning=preserving
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

CHUNK = 8
COLS = 128


def _chunk_step(x_ref, first, i, carry):
    acc = pl.get_global(pltpu.VMEM((CHUNK, COLS), jnp.float32))

    @pl.when(jnp.logical_and(first, i == 0))
    def _():
        acc[...] = jnp.zeros_like(acc)

    acc[...] += x_ref[pl.ds(i * CHUNK, CHUNK), :]
    return carry + jnp.sum(acc[...])


def colsum_kernel(x_ref, o_ref):
    first = pl.program_id(0) == 0
    chunks = x_ref.shape[0] // CHUNK
    total = jax.lax.fori_loop(0, chunks, functools.partial(_chunk_step, x_ref, first), jnp.float32(0))
    o_ref[...] = jnp.full(o_ref.shape, total, jnp.float32)


def colsum(x):
    return pl.pallas_call(
        colsum_kernel,
        out_shape=jax.ShapeDtypeStruct((8, COLS), jnp.float32),
        grid=(1,),
        in_specs=[pl.BlockSpec(x.shape, lambda i: (0, 0))],
        out_specs=pl.BlockSpec((8, COLS), lambda i: (0, 0)),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
    )(x)


def target():
    return colsum, (jax.ShapeDtypeStruct((64, COLS), jnp.float32),), "tpu"
