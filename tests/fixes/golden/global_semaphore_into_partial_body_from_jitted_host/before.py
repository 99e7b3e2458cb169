"""A jitted launcher binding its global semaphore into the body with functools.partial, written in the launch:
the body asks for it itself, and the partial binds the rest.

(Before, PAL008 quoted "Cannot lower jaxpr with effects" where jax 0.12 says "TypeError: No ir_type_handler for
aval type", and no fix was offered.)
"""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def _body(offset, done, x_ref, o_ref):
    o_ref[...] = x_ref[...] + offset
    pl.semaphore_signal(done)
    pl.semaphore_wait(done)


@functools.partial(jax.jit, static_argnums=1)
def shifted(x, offset):
    done = pl.get_global(plgpu.SemaphoreType.REGULAR)
    return plgpu.kernel(functools.partial(_body, offset, done), out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
                        grid=(2,), grid_names=("b",))(x)


def target():
    return functools.partial(shifted, offset=1.0), (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
