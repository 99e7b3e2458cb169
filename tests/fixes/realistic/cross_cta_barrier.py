"""Blocks of the grid meant to meet at one barrier: a global semaphore used as a barrier across CTAs."""
# fix-rate: kind=none meaning=none
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def body(x_ref, o_ref):
    everyone = pl.get_global(plgpu.SemaphoreType.REGULAR)
    o_ref[...] = x_ref[...] + 1.0
    pl.semaphore_signal(everyone)
    plgpu.barrier_wait(everyone)
    o_ref[...] = o_ref[...] * 2.0


def target():
    x = jax.ShapeDtypeStruct((128,), jnp.float32)
    return plgpu.kernel(body, out_type=x, grid=(4,), grid_names=("blocks",)), (x,), "cuda"
