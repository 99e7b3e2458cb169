"""pl.kernel on a plgpu.Mesh of two warpgroups and no grid: a flag per stage, each a get_global."""
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((256,), jnp.float32)


def body(x_ref, o_ref):
    loaded = pl.get_global(plgpu.SemaphoreType.REGULAR)
    stored = pl.get_global(plgpu.SemaphoreType.REGULAR)

    @pl.when(lax.axis_index("wg") == 0)
    def _producer():
        pl.semaphore_signal(loaded)
        pl.semaphore_wait(stored)

    @pl.when(lax.axis_index("wg") == 1)
    def _consumer():
        pl.semaphore_wait(loaded)
        o_ref[...] = x_ref[...]
        pl.semaphore_signal(stored)


def target():
    mesh = plgpu.Mesh(num_threads=2, thread_name="wg")
    return pl.kernel(body, out_type=X, mesh=mesh), (X,), "cuda"
