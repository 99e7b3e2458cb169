"""A TPU DMA semaphore type asked of get_global in a Mosaic GPU kernel (ported from TPU code)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
    sem = pl.get_global(pltpu.SemaphoreType.DMA)
    pl.semaphore_signal(sem)
    pl.semaphore_wait(sem)
    o_ref[...] = x_ref[...]


def target():
    return plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("i",)), (X,), "cuda"
