"""A producer kernel returns its data and a semaphore of flags; a consumer kernel waits on those flags."""
# fix-rate: kind=semaphore_output meaning=preserving
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

BLOCKS = 2


def _produce(x_ref, y_ref, flags_ref):
    y_ref[...] = x_ref[...] * 2.0
    pl.semaphore_signal(flags_ref)


def _consume(y_ref, flags_ref, o_ref):
    pl.semaphore_wait(flags_ref)
    o_ref[...] = y_ref[...] + 1.0


def pipeline(x):
    y, flags = plgpu.kernel(_produce, out_type=(jax.ShapeDtypeStruct(x.shape, x.dtype), plgpu.SemaphoreType.REGULAR),
                            grid=(BLOCKS,), grid_names=("blocks",))(x)
    return plgpu.kernel(_consume, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
                        grid=(BLOCKS,), grid_names=("blocks",))(y, flags)


def target():
    return pipeline, (jax.ShapeDtypeStruct((256,), jnp.float32),), "cuda"
