"""The semaphore's scope passed to get_global as a second argument."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((256,), jnp.float32)


def body(x_ref, o_ref):
    o_ref[...] = x_ref[...]
    done = pl.get_global(plgpu.SemaphoreType.REGULAR)
    pl.semaphore_signal(done)


def target():
    return plgpu.kernel(body, out_type=X, grid=(4,), grid_names=("blocks",)), (X,), "cuda"
