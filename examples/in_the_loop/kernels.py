"""Mosaic GPU kernels that a test file reaches: `pallas-lsp check --trace examples/in_the_loop` runs
`test_kernels.py`, and JAX lowers every launch its tests reach (and compiles it where a GPU is
attached). `add_one` and `scaled_rows` are correct; `staged` hands `pl.get_global` a shared-memory
buffer, which JAX rejects (PAL001, confirmed by JAX); `widened` adds arrays of two shapes, which no
rule knows and JAX reports (PAL100)."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def add_one(x):
    @functools.partial(plgpu.kernel, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))
    def body(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1.0

    return body(x)


def scaled_rows(x, scale):
    @functools.partial(plgpu.kernel, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
                       scratch_types=[plgpu.SMEM(x.shape, x.dtype)])
    def body(x_ref, o_ref, tile):
        tile[...] = x_ref[...] * scale
        o_ref[...] = tile[...]

    return body(x)


def staged(x):
    @functools.partial(plgpu.kernel, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))
    def body(x_ref, o_ref):
        tile = pl.get_global(plgpu.SMEM(x.shape, x.dtype))
        tile[...] = x_ref[...]
        o_ref[...] = tile[...]

    return body(x)


def widened(x):
    @functools.partial(plgpu.kernel, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))
    def body(x_ref, o_ref):
        o_ref[...] = x_ref[...] + jnp.ones((x.shape[0] // 2,), x.dtype)

    return body(x)

