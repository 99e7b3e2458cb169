"""pl.kernel on a plgpu.Mesh without grid: two flags made by one helper, called twice."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def new_flag():
    return pl.get_global(plgpu.SemaphoreType.REGULAR)


def body(x_ref, o_ref):
    ready = new_flag()
    done = new_flag()
    pl.semaphore_signal(ready)
    pl.semaphore_wait(ready)
    o_ref[...] = x_ref[...]
    pl.semaphore_signal(done)
    pl.semaphore_wait(done)


kernel = pl.kernel(body, out_type=X, mesh=plgpu.Mesh(num_threads=1, thread_name="wg"))


def target():
    return kernel, (X,), "cuda"
