"""A GMEM workspace a functools.cached_property describes, written by the kernel before it reads it: the
workspace becomes one more output (XLA allocates a kernel's global memory as its outputs), written with the
launch's own `plan.workspace`, and the caller takes back the one result it had.

(Before: no finding; the cached_property was read as a method.)
"""
import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


class Plan:
    n = 128

    @functools.cached_property
    def workspace(self):
        return plgpu.GMEM((self.n,), jnp.float32)


def make(plan):
    def body(x_ref, o_ref, ws_ref):
        ws_ref[...] = x_ref[...] * 2.0
        o_ref[...] = ws_ref[...] + 1.0

    return plgpu.kernel(
        body,
        out_type=(
            jax.ShapeDtypeStruct((plan.n,), jnp.float32),
            jax.ShapeDtypeStruct(plan.workspace.shape, plan.workspace.dtype),
        ),
    )


def doubled_plus_one(plan, x):
    return make(plan)(x)[0]


def target():
    return functools.partial(doubled_plus_one, Plan()), (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
