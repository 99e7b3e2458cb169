"""Bodies picked from a dict by name; one of them asks for a global array."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def add_body(lut_ref, x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1.0


def lut_body(lut_ref, x_ref, o_ref):
    o_ref[...] = x_ref[...] + lut_ref[...]


BODIES = {"add": add_body, "lut": lut_body}


def make(name):
    return functools.partial(
        plgpu.kernel(BODIES[name], out_type=X), jnp.zeros((128,), jnp.float32)
    )


def target():
    lut, add = make("lut"), make("add")
    return (lambda x: (lut(x), add(x))), (X,), "cuda"
