"""A TPU kernel whose running-sum buffer is an optional parameter: the grid launch gives it as scratch, the
one-block launch for short inputs leaves it None and the body falls back on get_global (no TPU lowering). That
launch gets the same scratch, written with its own block (`o_ref.shape` is its out block, `(rows, 128)`), and the
fallback goes."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def cumulative_kernel(x_ref, o_ref, carry_ref=None):
    if carry_ref is None:
        carry_ref = pl.get_global(pltpu.VMEM(o_ref.shape, jnp.float32))
    carry_ref[...] = x_ref[...].astype(jnp.float32) * 2.0
    o_ref[...] = carry_ref[...].astype(o_ref.dtype)


def _blocked(x, block_rows):
    rows = x.shape[0]
    spec = pl.BlockSpec((block_rows, 128), lambda i: (i, 0))
    return pl.pallas_call(
        cumulative_kernel,
        grid=(rows // block_rows,),
        in_specs=[spec],
        out_specs=spec,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        scratch_shapes=[pltpu.VMEM((block_rows, 128), jnp.float32)],
    )(x)


def _one_block(x):
    rows = x.shape[0]
    return pl.pallas_call(
        cumulative_kernel,
        in_specs=[pl.BlockSpec((rows, 128), lambda: (0, 0))],
        out_specs=pl.BlockSpec((rows, 128), lambda: (0, 0)),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
    )(x)


@functools.partial(jax.jit, static_argnames=("block_rows",))
def doubled(x, block_rows=64):
    if x.shape[0] <= block_rows:
        return _one_block(x)
    return _blocked(x, block_rows)


def target():
    return doubled, (jax.ShapeDtypeStruct((32, 128), jnp.float32),), "tpu"
