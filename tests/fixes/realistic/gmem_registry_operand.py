"""A registry of buffer kinds (dict) holding a GMEM residual's type per width; the body fetches it."""
# fix-rate: kind=operand meaning=preserving
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

KINDS = {"residual": lambda width: plgpu.GMEM((width,), jnp.float32)}


def add_residual(x, width=128):
    def body(x_ref, o_ref):
        res = pl.get_global(KINDS["residual"](width))
        o_ref[...] = x_ref[...] + res[...]

    return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((width,), jnp.float32))(x)


def target():
    def both(x, y):
        return add_residual(x), add_residual(y, 256)

    return both, (jax.ShapeDtypeStruct((128,), jnp.float32), jax.ShapeDtypeStruct((256,), jnp.float32)), "cuda"
