"""A TPU kernel debugged inside pltpu.force_tpu_interpret_mode() asks get_global for a semaphore."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def body(x_ref, o_ref):
    sem = pl.get_global(pltpu.SemaphoreType.REGULAR)
    pl.semaphore_signal(sem)
    pl.semaphore_wait(sem)
    o_ref[...] = x_ref[...] + 1.0


def debug(x):
    with pltpu.force_tpu_interpret_mode():
        return jax.block_until_ready(pl.pallas_call(body, out_shape=X)(x))


def target():
    return debug, (jnp.zeros((8, 128), jnp.float32),), "interpret"


def expected():
    return jnp.ones((8, 128), jnp.float32)
