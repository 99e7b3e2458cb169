"""A TPU semaphore asked of get_global in a TPU pallas_call: a scratch semaphore, still a TPU one.

(A fix once turned it into `pl.mosaic_gpu.SemaphoreType.REGULAR`: an AttributeError, since the
submodule is not imported, and no TPU kernel can use get_global anyway.)
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def body(x_ref, o_ref, sem_ref):
    pl.semaphore_signal(sem_ref)
    pl.semaphore_wait(sem_ref)
    o_ref[...] = x_ref[...]


def target():
    return pl.pallas_call(
        body, out_shape=X, scratch_shapes=[pltpu.SemaphoreType.REGULAR]
    ), (X,), "tpu"
