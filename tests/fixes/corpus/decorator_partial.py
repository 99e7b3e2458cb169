"""A functools.partial(plgpu.kernel, ...) decorator; the kernel is called by a jitted function."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


@functools.partial(plgpu.kernel, out_type=X)
def shifted(x_ref, o_ref):
    shift = pl.get_global(plgpu.GMEM((128,), jnp.float32))
    o_ref[...] = x_ref[...] - shift[...]


@jax.jit
def apply(x):
    return shifted(x)


def target():
    return apply, (X,), "cuda"
