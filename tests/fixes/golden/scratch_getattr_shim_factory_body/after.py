"""`get_global` looked up by a compatibility shim (`getattr(pl, "get_global", None) or ...`), in a body a
factory builds for its launch (`plgpu.kernel(make_body(width), ...)`): the type is written at the launch with
the argument the launch gives the factory.

(Before: no finding; the shim's getattr was not followed.)
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

get_global = getattr(pl, "get_global", None) or getattr(plgpu, "get_global")


def make_body(width):
    def body(x_ref, o_ref, buf_ref):
        buf_ref[...] = x_ref[...] - 1.0
        o_ref[...] = buf_ref[...]

    return body


def minus_one(x):
    n = x.shape[0]
    return plgpu.kernel(
        make_body(n),
        out_type=jax.ShapeDtypeStruct((n,), jnp.float32),
        scratch_types=[plgpu.SMEM((n,), jnp.float32)],
    )(x)


def target():
    return minus_one, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
