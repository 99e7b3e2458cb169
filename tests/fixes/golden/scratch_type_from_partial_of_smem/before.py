"""A launcher that builds its SMEM type with `functools.partial(plgpu.SMEM, dtype=cfg.dtype)` and a nested body
asking get_global for `smem((cfg.block_m, cfg.block_n))`, run for two configurations: the launch sees the same
closure variables, so the scratch is that expression, not one configuration's `plgpu.SMEM((64, 128), ...)`.
"""
import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class TileConfig:
    block_m: int = 128
    block_n: int = 128
    dtype: object = jnp.bfloat16


def scale(x, cfg: TileConfig = TileConfig()):
    smem = functools.partial(plgpu.SMEM, dtype=cfg.dtype)

    def body(x_ref, o_ref):
        tile = pl.get_global(smem((cfg.block_m, cfg.block_n)))
        tile[...] = x_ref[...] * 2
        o_ref[...] = tile[...]

    return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def target():
    small = TileConfig(block_m=64, dtype=jnp.float32)

    def both(x, y):
        return scale(x), scale(y, small)

    return both, (jax.ShapeDtypeStruct((128, 128), jnp.bfloat16), jax.ShapeDtypeStruct((64, 128), jnp.float32)), "cuda"
