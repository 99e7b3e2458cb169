"""A TPU launcher gathers the body's keywords in a dict, a VMEM accumulator from get_global among them."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _body(x_ref, o_ref, acc_ref, *, bias):
    acc_ref[...] = x_ref[...] + bias
    o_ref[...] = acc_ref[...] * 2.0


def biased(x, bias=1.0):
    options = {
        "acc_ref": pl.get_global(pltpu.VMEM(x.shape, jnp.float32)),
        "bias": bias,
    }
    return pl.pallas_call(
        functools.partial(_body, **options),
        out_shape=jax.ShapeDtypeStruct(x.shape, jnp.float32),
    )(x)


def target():
    return jax.jit(biased), (jax.ShapeDtypeStruct((8, 128), jnp.float32),), "tpu"
