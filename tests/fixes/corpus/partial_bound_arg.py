"""The body takes a bound scale through functools.partial."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(scale, x_ref, o_ref):
    offsets = pl.get_global(plgpu.GMEM((128,), jnp.float32))
    o_ref[...] = x_ref[...] * scale + offsets[...]


def target():
    return plgpu.kernel(functools.partial(body, 2.0), out_type=X), (X,), "cuda"
