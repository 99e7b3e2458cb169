"""Kernels are built through a project wrapper around plgpu.kernel."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def gpu_kernel(body):
    return plgpu.kernel(body, out_type=X)


def body(x_ref, o_ref):
    scale = pl.get_global(plgpu.GMEM((128,), jnp.float32))
    o_ref[...] = x_ref[...] * scale[...]


scaled = gpu_kernel(body)


def target():
    return scaled, (X,), "cuda"
