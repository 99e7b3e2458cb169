"""A factory that looks its staging buffer up in a registry of buffer kinds (a dict of type builders)."""
# fix-rate: kind=scratch meaning=preserving
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

BUFFER_KINDS = {
    "row": lambda width, dtype: plgpu.SMEM((width,), dtype),
    "tile": lambda width, dtype: plgpu.SMEM((width, width), dtype),
}


def make_row_scale(width, dtype=jnp.float32, kind="row"):
    def kernel(x_ref, o_ref):
        buf = pl.get_global(BUFFER_KINDS[kind](width, dtype))
        buf[...] = x_ref[...] * 3
        o_ref[...] = buf[...]

    return plgpu.kernel(kernel, out_type=jax.ShapeDtypeStruct((width,), dtype))


def target():
    def both(x, y):
        return make_row_scale(128)(x), make_row_scale(256, jnp.bfloat16)(y)

    return both, (jax.ShapeDtypeStruct((128,), jnp.float32), jax.ShapeDtypeStruct((256,), jnp.bfloat16)), "cuda"
