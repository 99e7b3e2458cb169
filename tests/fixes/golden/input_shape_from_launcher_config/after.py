"""A Triton kernel nested in its launcher, whose bias buffer is asked of get_global with the launcher's config,
run for two configurations: the new input's block and zeros take the shape and dtype as written,
`(cfg.width,)` and `cfg.dtype`, which the launch sees too (before, with two values the analysis saw, no fix).
"""
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class BiasConfig:
    width: int = 128
    dtype: object = jnp.float32


def add_bias(x, cfg: BiasConfig = BiasConfig()):
    def body(bias_ref, x_ref, o_ref):
        o_ref[...] = x_ref[...] + bias_ref[...]

    return pl.pallas_call(
        body,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[
            pl.BlockSpec((cfg.width,), lambda: (0,), memory_space=plgpu.GMEM),
            pl.BlockSpec((cfg.width,), lambda: (0,)),
        ],
        out_specs=pl.BlockSpec((cfg.width,), lambda: (0,)),
    )(jnp.zeros((cfg.width,), cfg.dtype), x)


def target():
    narrow = BiasConfig(width=64)

    def both(x, y):
        return add_bias(x), add_bias(y, narrow)

    return both, (jax.ShapeDtypeStruct((128,), jnp.float32), jax.ShapeDtypeStruct((64,), jnp.float32)), "triton"
