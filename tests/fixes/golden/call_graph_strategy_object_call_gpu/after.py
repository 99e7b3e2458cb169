"""A strategy object picked by the config is called in a Mosaic GPU body; its `__call__` stages in SMEM."""
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

BLOCK = 128


class Identity:
    def __call__(self, v, out_ref, span):
        out_ref[span] = v.astype(out_ref.dtype)


class Squash:
    def __init__(self, scale):
        self.scale = scale

    def __call__(self, v, out_ref, span):
        def scoped(tile):
            tile[...] = jnp.tanh(v) * self.scale
            out_ref[span] = tile[...].astype(out_ref.dtype)
        pl.run_scoped(scoped, plgpu.SMEM((BLOCK,), jnp.float32))


def _body(finish, x_ref, o_ref):
    i = lax.axis_index("i")
    span = pl.ds(i * BLOCK, BLOCK)
    finish(x_ref[span].astype(jnp.float32), o_ref, span)


@jax.jit
def squashed(x):
    return plgpu.kernel(
        functools.partial(_body, Squash(3.0)),
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(x.shape[0] // BLOCK,),
        grid_names=("i",),
    )(x)


def target():
    return squashed, (jax.ShapeDtypeStruct((512,), jnp.float16),), "cuda"
