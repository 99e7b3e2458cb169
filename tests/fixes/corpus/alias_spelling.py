"""The file spells Mosaic GPU `mgpu`; a TPU semaphore type ported from TPU code: the fix says `mgpu`."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as mgpu
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
    flag = pl.get_global(pltpu.SemaphoreType.REGULAR)
    pl.semaphore_signal(flag)
    pl.semaphore_wait(flag)
    o_ref[...] = x_ref[...]


def target():
    return mgpu.kernel(body, out_type=X, grid=(2,), grid_names=("i",)), (X,), "cuda"
