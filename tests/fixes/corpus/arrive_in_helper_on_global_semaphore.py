"""A helper arrives on and waits for a "barrier" the body took from get_global."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def sync(barrier):
    plgpu.barrier_arrive(barrier)
    plgpu.barrier_wait(barrier)


def body(x_ref, o_ref):
    barrier = pl.get_global(plgpu.SemaphoreType.REGULAR)
    o_ref[...] = x_ref[...] + 1.0
    sync(barrier)


def target():
    return plgpu.kernel(body, out_type=X), (X,), "cuda"
