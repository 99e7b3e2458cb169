"""A namespace class whose semaphore attribute is made when the module is imported, read by two kernel bodies:
the attribute keeps the semaphore type and each body asks for its own semaphore once.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


class Flags:
    READY = plgpu.SemaphoreType.REGULAR  # one per launch


def negate_body(x_ref, o_ref):
    """Negates, then orders the halves."""
    ready = pl.get_global(Flags.READY)
    o_ref[...] = -x_ref[...]
    pl.semaphore_signal(ready)
    pl.semaphore_wait(ready)


def square_body(x_ref, o_ref):
    ready2 = pl.get_global(Flags.READY)
    ready = x_ref[...]
    o_ref[...] = ready * ready
    pl.semaphore_signal(ready2)
    pl.semaphore_wait(ready2)


negate = plgpu.kernel(negate_body, out_type=X)
square = plgpu.kernel(square_body, out_type=X)


def both(x):
    return square(negate(x))


def target():
    return both, (X,), "cuda"
