"""A kernel configured by a dataclass; the shapes come from the config at run time."""
import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class Config:
    rows: int = 8
    block: int = 128
    dtype: object = jnp.float32


def body(x_ref, o_ref, tmp_ref):
    tmp_ref[...] = x_ref[...] * 2.0
    o_ref[...] = tmp_ref[...] + 1.0


def scale(x, config: Config):
    kernel = plgpu.kernel(
        body,
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        scratch_types=[plgpu.SMEM((config.rows, config.block), config.dtype)],
    )
    return kernel(x)


if __name__ == "__main__":
    config = Config()
    x = jnp.ones((config.rows, config.block), config.dtype)
    print(scale(x, config).shape)
