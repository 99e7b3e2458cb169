"""pl.kernel with a Mosaic GPU mesh; the body reads a global array."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
    lut = pl.get_global(plgpu.GMEM((128,), jnp.float32))
    o_ref[...] = x_ref[...] + lut[...]


def target():
    return pl.kernel(body, out_type=X, mesh=plgpu.Mesh(grid=(1,), grid_names=("i",))), (X,), "cuda"
