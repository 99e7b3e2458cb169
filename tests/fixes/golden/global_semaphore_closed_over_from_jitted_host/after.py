"""A jitted step makes the semaphore with get_global and its nested kernel body closes over it: the get_global
moves into the body, the one place a global semaphore exists, shared by the launch's grid as meant.

(Before, no fix: the result is not passed to the launch as an operand; jax 0.12 'TypeError: No ir_type_handler
for aval type' at the jit, 'Cannot lower jaxpr with effects: {SemaphoreEffect}' where it is signalled.)
"""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@functools.partial(jax.jit, static_argnames=("blocks",))
def step(x, blocks=2):
    def body(x_ref, o_ref):
        """Each block adds one, then signals and waits."""
        ready = pl.get_global(plgpu.SemaphoreType.REGULAR)  # one flag for the whole grid
        o_ref[...] = x_ref[...] + 1.0
        pl.semaphore_signal(ready)
        pl.semaphore_wait(ready)

    return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(blocks,),
                        grid_names=("blocks",))(x)


def target():
    return step, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
