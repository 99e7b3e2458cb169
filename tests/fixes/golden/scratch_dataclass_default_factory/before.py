"""A scratch type a dataclass field's `default_factory` makes, the config defaulted with `cfg or Config()`: the
type is moved to scratch_types as the launch writes it (`cfg.staging`).

(Before: no finding; the factory's product and `None or Config()` were not known.)
"""
import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass
class Config:
    staging: plgpu.SMEM = dataclasses.field(default_factory=lambda: plgpu.SMEM((256,), jnp.float32))


def body(cfg, x_ref, o_ref):
    buf = pl.get_global(cfg.staging)
    buf[...] = x_ref[...] + 1.0
    o_ref[...] = buf[...]


def plus_one(x, cfg=None):
    cfg = cfg or Config()
    return plgpu.kernel(functools.partial(body, cfg), out_type=jax.ShapeDtypeStruct((256,), jnp.float32))(x)


def target():
    return plus_one, (jax.ShapeDtypeStruct((256,), jnp.float32),), "cuda"
