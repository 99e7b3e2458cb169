"""The config's bias width does not match the block: JAX rejects the addition in the body."""
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass
class Config:
    block: int = 128
    bias_width: int = 96


def make_body(config):
    def body(x_ref, o_ref):
        o_ref[...] = x_ref[...] + jnp.ones((config.bias_width,), jnp.float32)
    return body


def add_bias(x, config):
    return plgpu.kernel(make_body(config), out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


if __name__ == "__main__":
    cfg = Config()
    add_bias(jnp.zeros((cfg.block,), jnp.float32), cfg)
