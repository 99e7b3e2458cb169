"""INTERPRET defaults to the CPU backend; the barrier-free kernel waits on a global semaphore it signalled."""
# fix-rate: kind=interpret meaning=preserving
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

INTERPRET = jax.default_backend() == "cpu"


def body(x_ref, o_ref):
    sem = pl.get_global(plgpu.SemaphoreType.REGULAR)
    o_ref[...] = x_ref[...] * 5.0
    pl.semaphore_signal(sem)
    pl.semaphore_wait(sem)


kernel = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128,), jnp.float32), interpret=INTERPRET)


def target():
    return kernel, (jnp.ones((128,), jnp.float32),), "interpret"


def expected():
    return jnp.full((128,), 5.0, jnp.float32)
