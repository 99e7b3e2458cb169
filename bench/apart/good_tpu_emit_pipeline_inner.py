"""Outer kernel over HBM refs with an inner emit_pipeline (TPU)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

BLOCK = (8, 128)


def inner(x_blk, o_blk):
  o_blk[...] = x_blk[...] * 2.0


def outer(x_hbm, o_hbm):
  pltpu.emit_pipeline(
      inner,
      grid=(x_hbm.shape[0] // BLOCK[0],),
      in_specs=[pl.BlockSpec(BLOCK, lambda i: (i, 0))],
      out_specs=[pl.BlockSpec(BLOCK, lambda i: (i, 0))],
  )(x_hbm, o_hbm)


def double(x):
  return pl.pallas_call(
      outer,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec(memory_space=pl.ANY),
  )(x)


def target():
  return double, (jax.ShapeDtypeStruct((64, 128), jnp.float32),), "tpu"


if __name__ == "__main__":
  print(double(jnp.ones((64, 128), jnp.float32)))
