"""A bias kernel that fetches its table's buffer from a ShapeDtypeStruct made in layouts.py."""
# fix-rate: kind=input meaning=preserving
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

import layouts


def _bias_kernel(x_ref, o_ref):
    bias = pl.get_global(layouts.BIAS_TABLE)
    o_ref[...] = x_ref[...] + bias[...]


def add_bias(x):
    return pl.pallas_call(
        _bias_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(x.shape[0] // 8,),
        in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
        interpret=True,
    )(x)


def target():
    return add_bias, (jnp.ones((16, 128), jnp.float32),), "interpret"


def expected():
    return jnp.ones((16, 128), jnp.float32)
