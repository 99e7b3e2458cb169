"""A producer kernel returns a dict of outputs, its data and a semaphore of flags, which the caller reads by key
and hands to a consumer kernel that waits on them: the caller allocates the flags with plgpu.alloc_semaphore,
passes them to the producer after its input and puts them back in the dict, so `outs["flags"]` still reads them.

(Before, jax 0.12: 'Kernels cannot return semaphores. ... or via plgpu.alloc_semaphore before the kernels that
use them'.)
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def _produce(x_ref, flags_ref, data_ref):
    data_ref[...] = x_ref[...] * 2.0
    pl.semaphore_signal(flags_ref)


def _consume(data_ref, flags_ref, o_ref):
    pl.semaphore_wait(flags_ref)
    o_ref[...] = data_ref[...] + 1.0


def pipeline(x):
    # outputs in pytree order: data, then flags
    flags = plgpu.alloc_semaphore()
    outs = {**plgpu.kernel(_produce, out_type={"data": jax.ShapeDtypeStruct(x.shape, x.dtype)})(x, flags),
            "flags": flags}
    return plgpu.kernel(_consume, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(outs["data"], outs["flags"])


def target():
    return pipeline, (jax.ShapeDtypeStruct((256,), jnp.float32),), "cuda"
