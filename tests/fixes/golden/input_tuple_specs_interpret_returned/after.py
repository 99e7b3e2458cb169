"""A tuple in_specs with pl.ANY, grid of rank 1 written as an int; the callable is returned."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def copy_kernel(staging_ref, x_ref, o_ref):
    o_ref[...] = x_ref[...] + staging_ref[...]


def make():
    return functools.partial(pl.pallas_call(copy_kernel, out_shape=jax.ShapeDtypeStruct((4, 32), jnp.int32), grid=1,
                          in_specs=(pl.BlockSpec((4, 32), lambda i: (0, 0), memory_space=pl.ANY),
                                    pl.BlockSpec((4, 32), lambda i: (0, 0)),),
                          interpret=True), jnp.zeros((4, 32), jnp.int32))


def target():
    return make(), (jnp.full((4, 32), 7, jnp.int32),), "interpret"


def expected():
    return jnp.full((4, 32), 7, jnp.int32)
