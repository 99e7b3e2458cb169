"""A re-exported library type asked of get_global: the kernel is fixed, the library is left alone."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

import mylib

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
    tile = pl.get_global(mylib.STAGING)
    tile[...] = x_ref[...] * 3.0
    o_ref[...] = tile[...]


def target():
    return plgpu.kernel(body, out_type=X), (X,), "cuda"
