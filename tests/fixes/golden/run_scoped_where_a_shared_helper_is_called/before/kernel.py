"""Two kernel bodies take a buffer from `shared_staging.staging_buffer`: the helper returns the buffer's type, and each
body allocates it with pl.run_scoped for the rest of its body, with its own arguments.

(Before: a finding without a fix; the helper returns the buffer, so run_scoped inside it would end too early,
and its type depends on what each call passes.)
"""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

import shared_staging


def doubling(x_ref, o_ref):
    buf = shared_staging.staging_buffer(x_ref.shape[0])
    buf[...] = x_ref[...] * 2.0
    o_ref[...] = buf[...]


def shifting(x_ref, o_ref):
    buf = shared_staging.staging_buffer(x_ref.shape[0], x_ref.dtype)
    buf[...] = x_ref[...] + 1.0
    o_ref[...] = buf[...]


def both(x):
    y = plgpu.kernel(doubling, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
    return plgpu.kernel(shifting, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(y)


def target():
    return both, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
