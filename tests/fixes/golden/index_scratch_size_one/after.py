"""A scratch_types "one semaphore" written as an array of one, REGULAR((1,)), signalled whole."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((256,), jnp.float32)


def body(x_ref, o_ref, done):
    o_ref[...] = x_ref[...] + 1.0
    pl.semaphore_signal(done.at[0])
    pl.semaphore_wait(done.at[0])


def target():
    return plgpu.kernel(body, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR((1,))]), (X,), "cuda"
