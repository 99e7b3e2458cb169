"""A producer kernel returns its data and a semaphore of flags, which the caller unpacks and hands to a consumer
kernel that waits on them: the caller allocates the flags with plgpu.alloc_semaphore and passes them to both,
the producer taking them after its input.

(Before, no fix: dropping the output breaks 'y, flags = ...' ('not enough values to unpack'), and the consumer
would lose the flags it waits on; jax 0.12 'Kernels cannot return semaphores. ... or via plgpu.alloc_semaphore
before the kernels that use them'.)
"""
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
    # the producer signals once per block
    y, flags = plgpu.kernel(_produce, out_type=(jax.ShapeDtypeStruct(x.shape, x.dtype), plgpu.SemaphoreType.REGULAR),
                            grid=(BLOCKS,), grid_names=("blocks",))(x)
    return plgpu.kernel(_consume, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
                        grid=(BLOCKS,), grid_names=("blocks",))(y, flags)


def target():
    return pipeline, (jax.ShapeDtypeStruct((256,), jnp.float32),), "cuda"
