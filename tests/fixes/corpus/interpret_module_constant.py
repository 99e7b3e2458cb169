"""interpret= comes from a module constant; the body reads a global array."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


DEBUG = True


def body(x_ref, o_ref):
    bias = pl.get_global(plgpu.GMEM((128,), jnp.float32))
    o_ref[...] = x_ref[...] + bias[...]


def target():
    fn = pl.pallas_call(body, out_shape=X, interpret=DEBUG)
    return fn, (jnp.ones((128,), jnp.float32),), "interpret"


def expected():
    return jnp.ones((128,), jnp.float32)
