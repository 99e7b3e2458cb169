"""A jitted host function makes the semaphore with get_global and hands it to the kernel."""
# fix-rate: kind=into_body meaning=preserving
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def _body(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1.0


@functools.partial(jax.jit, static_argnames=("blocks",))
def step(x, blocks=2):
    ready = pl.get_global(plgpu.SemaphoreType.REGULAR)

    def body(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1.0
        pl.semaphore_signal(ready)
        pl.semaphore_wait(ready)

    return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(blocks,),
                        grid_names=("blocks",))(x)


def target():
    return step, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
