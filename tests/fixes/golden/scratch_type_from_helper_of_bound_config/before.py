"""A body whose config is bound by `functools.partial(_body, cfg=cfg)` and whose SMEM type comes from a helper,
`tile_type(cfg)`, run for two configurations: at the launch the body's `cfg` is the partial's argument, so the
scratch is `tile_type(cfg)` there, not one configuration's type copied.
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


def tile_type(cfg: TileConfig):
    return plgpu.SMEM((cfg.block_m, cfg.block_n), cfg.dtype)


def _body(x_ref, o_ref, *, cfg: TileConfig):
    tile = pl.get_global(tile_type(cfg))
    tile[...] = x_ref[...] * 2
    o_ref[...] = tile[...]


def scale(x, cfg: TileConfig = TileConfig()):
    kernel = plgpu.kernel(functools.partial(_body, cfg=cfg), out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))
    return kernel(x)


def target():
    small = TileConfig(block_m=64, dtype=jnp.float32)

    def both(x, y):
        return scale(x), scale(y, small)

    return both, (jax.ShapeDtypeStruct((128, 128), jnp.bfloat16), jax.ShapeDtypeStruct((64, 128), jnp.float32)), "cuda"
