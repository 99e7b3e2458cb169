"""A GMEM workspace the body hands to a helper that writes it first (`fill(ws, x_ref)`): the workspace becomes
one more output the caller drops, not an input buffer the kernel would write into.

(Before: the fix made it an input operand, since the first use was not seen as a write.)
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def fill(dst, src):
    dst[...] = src[...] * 2.0


def body(x_ref, o_ref):
    ws = pl.get_global(plgpu.GMEM((128,), jnp.float32))
    fill(ws, x_ref)
    o_ref[...] = ws[...] + 1.0


def doubled_plus_one(x):
    return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128,), jnp.float32))(x)


def target():
    return doubled_plus_one, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
