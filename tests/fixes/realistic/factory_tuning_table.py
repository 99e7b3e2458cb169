"""A kernel factory with a tuning table; the tile type is a functools.partial of plgpu.SMEM built per entry."""
# fix-rate: kind=scratch meaning=preserving
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

TUNING = {
    "h100": {"block_m": 128, "block_n": 128},
    "small": {"block_m": 64, "block_n": 128},
}


def build_kernel(chip="h100", dtype=jnp.bfloat16):
    params = TUNING[chip]
    tile_type = functools.partial(plgpu.SMEM, (params["block_m"], params["block_n"]))

    def body(x_ref, o_ref):
        tile = pl.get_global(tile_type(dtype))
        tile[...] = x_ref[...]
        o_ref[...] = tile[...] + tile[...]

    shape = jax.ShapeDtypeStruct((params["block_m"], params["block_n"]), dtype)
    return plgpu.kernel(body, out_type=shape)


def target():
    def both(x, y):
        return build_kernel()(x), build_kernel("small", jnp.float32)(y)

    return both, (jax.ShapeDtypeStruct((128, 128), jnp.bfloat16), jax.ShapeDtypeStruct((64, 128), jnp.float32)), "cuda"
