"""A kernel whose launch binds its config by keyword (`functools.partial(kernel, config=config)`, jax's
hopper_matmul_mgpu shape): the scratch parameter goes before `config`, where JAX's refs end (after it, the ref
would fill `config`: 'kernel() got multiple values for argument config'), and the type keeps `config.tile`."""
import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


@dataclasses.dataclass(frozen=True)
class Config:
  tile: int


def kernel(x_gmem, o_gmem, tile, config: Config, scale=2.0):
  tile[...] = x_gmem[...] * scale
  o_gmem[...] = tile[...]


def scaled(x, config: Config):
  return plgpu.kernel(
    functools.partial(kernel, config=config),
    out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
    scratch_types=[plgpu.SMEM((config.tile,), jnp.float32)],
  )(x)


def target():
  return functools.partial(scaled, config=Config(tile=128)), (X,), "cuda"
