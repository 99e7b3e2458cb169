"""get_global inside pl.when inside a fori_loop body, inside the kernel body."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, acc_ref):
    o_ref[...] = x_ref[...]

    def step(i, carry):
        @pl.when(i == 0)
        def _():
            acc_ref[...] = o_ref[...] + 1.0
            o_ref[...] = acc_ref[...]

        return carry

    jax.lax.fori_loop(0, 2, step, 0)


def target():
    return plgpu.kernel(
        body, out_type=X, scratch_types=[plgpu.SMEM((128,), jnp.float32)]
    ), (X,), "cuda"
