"""A TPU kernel asks get_global for a TPU semaphore (TPU has no global semaphores)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def body(x_ref, o_ref):
    ready = pl.get_global(pltpu.SemaphoreType.REGULAR)
    pl.semaphore_signal(ready)
    pl.semaphore_wait(ready)
    o_ref[...] = x_ref[...] * 2.0


def target():
    return pl.pallas_call(body, out_shape=X, compiler_params=pltpu.CompilerParams()), (X,), "tpu"
