"""A gridless kernel taking one global semaphore in each pl.when branch (both are lowered)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
    o_ref[...] = x_ref[...]

    @pl.when(x_ref[0] > 0)
    def _positive():
        sem = pl.get_global(plgpu.SemaphoreType.REGULAR)
        pl.semaphore_signal(sem)
        pl.semaphore_wait(sem)

    @pl.when(x_ref[0] <= 0)
    def _other():
        sem = pl.get_global(plgpu.SemaphoreType.REGULAR)
        pl.semaphore_signal(sem)
        pl.semaphore_wait(sem)


def target():
    return plgpu.kernel(body, out_type=X), (X,), "cuda"
