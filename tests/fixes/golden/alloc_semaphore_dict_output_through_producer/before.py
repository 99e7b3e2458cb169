"""A producer function builds a dict out_type with a `ready` semaphore beside its data and returns the kernel's
dict; a consumer function reads `outs["ready"]` for the kernel it launches: the producer takes the semaphore as
an input (after x, where `ready` sorts first among the outputs), returns it in the dict, and its caller
allocates it with plgpu.alloc_semaphore.

(Before, jax 0.12: 'Kernels cannot return semaphores. ... or via plgpu.alloc_semaphore before the kernels that
use them'.)
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def _produce(x_ref, ready_ref, scaled_ref):
    scaled_ref[...] = x_ref[...] * 0.5
    pl.semaphore_signal(ready_ref)


def _consume(scaled_ref, ready_ref, o_ref):
    pl.semaphore_wait(ready_ref)
    o_ref[...] = scaled_ref[...] - 1.0


def produce(x):
    out_type = {
        "scaled": jax.ShapeDtypeStruct(x.shape, x.dtype),
        "ready": plgpu.SemaphoreType.REGULAR,
    }
    return plgpu.kernel(_produce, out_type=out_type)(x)


def consume(outs):
    scaled = outs["scaled"]
    return plgpu.kernel(_consume, out_type=jax.ShapeDtypeStruct(scaled.shape, scaled.dtype))(scaled, outs["ready"])


@jax.jit
def pipeline(x):
    outs = produce(x)
    return consume(outs)


def target():
    return pipeline, (jax.ShapeDtypeStruct((128, 256), jnp.float32),), "cuda"
