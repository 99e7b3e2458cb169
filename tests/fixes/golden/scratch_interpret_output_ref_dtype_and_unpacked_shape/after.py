"""A running row total carried across an interpreted sequential grid, its VMEM type from the input ref's
unpacked shape and the output ref's dtype (`rows, cols = x_ref.shape`; `pltpu.VMEM((1, cols), o_ref.dtype)`):
the launch writes `cols` and out_shape's dtype; `interpret=True` is kept, so the tests still run on the CPU.
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

BLOCK = 8


def _prefix_body(x_ref, o_ref, total_ref):
    rows, cols = x_ref.shape

    @pl.when(pl.program_id(0) == 0)
    def _start():
        total_ref[...] = jnp.zeros((1, cols), o_ref.dtype)

    total_ref[...] += jnp.sum(x_ref[...], axis=0, keepdims=True).astype(o_ref.dtype)
    o_ref[...] = total_ref[...]


def prefix_sums(x):
    n, width = x.shape
    return pl.pallas_call(
        _prefix_body,
        out_shape=jax.ShapeDtypeStruct((n // BLOCK, width), jnp.float32),
        grid=(n // BLOCK,),
        in_specs=[pl.BlockSpec((BLOCK, width), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((1, width), lambda i: (i, 0)),
        interpret=True,
        scratch_shapes=[pltpu.VMEM((1, width), jnp.float32)],
    )(x)


def _x():
    return jnp.arange(32 * 16, dtype=jnp.float32).reshape(32, 16) % 7.0


def target():
    return prefix_sums, (_x(),), "interpret"


def expected():
    blocks = np.asarray(_x()).reshape(-1, BLOCK, 16).sum(axis=1)
    return np.cumsum(blocks, axis=0)
