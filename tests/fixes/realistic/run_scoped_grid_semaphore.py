"""A semaphore shared by the grid allocated with run_scoped over the grid axis (that is get_global)."""
# fix-rate: kind=run_scoped_global meaning=preserving
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def make(width=128, blocks=2):
    def body(x_ref, o_ref):
        def scoped(sem):
            pl.semaphore_signal(sem)
            pl.semaphore_wait(sem)
            o_ref[...] = x_ref[...] * 2.0

        pl.run_scoped(scoped, plgpu.SemaphoreType.REGULAR, collective_axes="blocks")

    return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((width,), jnp.float32), grid=(blocks,),
                        grid_names=("blocks",))


def target():
    return make(), (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
