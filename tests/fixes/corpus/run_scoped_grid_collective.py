"""A run_scoped semaphore meant to be shared by every block of the grid (collective over the grid axis)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
    def exchange(sem):
        pl.semaphore_signal(sem)
        pl.semaphore_wait(sem)
        o_ref[...] = x_ref[...]

    pl.run_scoped(exchange, plgpu.SemaphoreType.REGULAR, collective_axes="blocks")


def target():
    return plgpu.kernel(body, out_type=X, grid=(4,), grid_names=("blocks",)), (X,), "cuda"
