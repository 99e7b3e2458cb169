"""An @plgpu.kernel(...) decorator; SMEM staging through get_global."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


@plgpu.kernel(out_type=X)
def staged(x_ref, o_ref):
    tile = pl.get_global(plgpu.SMEM((128,), jnp.float32))
    tile[...] = x_ref[...]
    o_ref[...] = tile[...] * 0.5


def target():
    return staged, (X,), "cuda"
