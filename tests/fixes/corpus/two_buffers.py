"""Two bad get_globals in one body: a global array and an SMEM tile."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
    lut = pl.get_global(plgpu.GMEM((128,), jnp.float32))
    tile = pl.get_global(plgpu.SMEM((128,), jnp.float32))
    tile[...] = x_ref[...] + lut[...]
    o_ref[...] = tile[...]


def target():
    return plgpu.kernel(body, out_type=X), (X,), "cuda"
