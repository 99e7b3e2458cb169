"""Silencing one finding: the comment goes on the get_global line."""
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def body(x_ref, o_ref):
  buffer = pl.get_global(plgpu.SMEM((8,), "float32"))  # kept on purpose
  o_ref[...] = x_ref[...] + buffer[...]
