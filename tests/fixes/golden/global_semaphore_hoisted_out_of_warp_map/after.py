"""A @plgpu.warp_map function asks for the global semaphore itself: the get_global moves to the kernel code
just before it, which the warp function closes over.

(Before: no finding; warp_map was not known to run its function at warp level.)
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1.0

    flag = pl.get_global(plgpu.SemaphoreType.REGULAR)

    @plgpu.warp_map
    def _per_warp(warp_id):
        @pl.when(warp_id == 0)
        def _():
            pl.semaphore_signal(flag)
            pl.semaphore_wait(flag)


def target():
    return plgpu.kernel(body, out_type=X), (X,), "cuda"
