"""Semaphores made with plgpu.alloc_semaphore, read out of their ref before the launch."""
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((256,), jnp.float32)


@functools.partial(plgpu.kernel, out_type=X, grid=(2,), grid_names=("blocks",))
def kernel(x_ref, flags_ref, o_ref):
    o_ref[...] = x_ref[...]
    pl.semaphore_signal(flags_ref.at[lax.axis_index("blocks")])


def step(x):
    flags = plgpu.alloc_semaphore((2,))
    return kernel(x, flags)


def target():
    return step, (X,), "cuda"
