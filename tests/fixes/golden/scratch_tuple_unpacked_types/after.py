"""A buffer type a helper returns in a tuple, unpacked in the body (`tile_t, scale = stage(n)`): it is
allocated at the launch as its item of the helper's tuple (`stage(n)[0]`), for whatever `n` the launch has.

(Before: a finding without a fix; an unpacked local could not be written at the launch.)
"""
import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def stage(n):
    return plgpu.SMEM((n,), jnp.float32), 2.0


def body(x_ref, o_ref, bar, tile, *, n):
    tile_t, scale = stage(n)
    plgpu.copy_gmem_to_smem(x_ref, tile, bar)
    plgpu.barrier_wait(bar)
    o_ref[...] = tile[...] * scale


def scaled(x):
    n = x.shape[0]
    return plgpu.kernel(functools.partial(body, n=n), out_type=jax.ShapeDtypeStruct((n,), jnp.float32),
                        scratch_types=[plgpu.Barrier(num_arrivals=1), stage(n)[0]])(x)


def target():
    return scaled, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
