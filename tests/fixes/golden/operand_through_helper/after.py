"""A helper reads a lookup table through get_global; the body calls it."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def add_lut(x_ref, lut):
    return x_ref[...] + lut[...]


def body(lut, x_ref, o_ref):
    o_ref[...] = add_lut(x_ref, lut)


def target():
    return functools.partial(
        plgpu.kernel(body, out_type=X), jnp.zeros((128,), jnp.float32)
    ), (X,), "cuda"
