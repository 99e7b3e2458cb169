"""Kernel bodies; launched from launch.py."""
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def residual_body(x_ref, o_ref):
    residual = pl.get_global(plgpu.GMEM((128,), jnp.float32))
    o_ref[...] = x_ref[...] + residual[...]
