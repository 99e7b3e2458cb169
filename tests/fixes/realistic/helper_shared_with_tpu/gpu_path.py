"""The GPU path: the same helper's type, fetched with get_global in the body."""
# fix-rate: kind=scratch meaning=preserving
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

from buffers import staging_type
from tpu_path import scale_tpu


def scale_gpu(x, width=128):
    def body(x_ref, o_ref):
        stage = pl.get_global(staging_type(width, x.dtype))
        stage[...] = x_ref[...]
        o_ref[...] = stage[...] + 1.0

    return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((width,), x.dtype))(x)


def target():
    def both(x, y):
        return scale_gpu(x), scale_gpu(y, 256)

    return both, (jax.ShapeDtypeStruct((128,), jnp.float32), jax.ShapeDtypeStruct((256,), jnp.float32)), "cuda"
