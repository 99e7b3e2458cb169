"""A Triton pallas_call with Triton's tuning written at the launch whose body asks for a global semaphore:
launched with plgpu.kernel (Mosaic GPU) instead, the Triton tuning (no meaning there) dropped.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import triton as pltriton


def body(x_ref, o_ref):
    done = pl.get_global(plgpu.SemaphoreType.REGULAR)
    o_ref[...] = x_ref[...] * 2.0
    pl.semaphore_signal(done)
    pl.semaphore_wait(done)


def double(x):
    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          compiler_params=pltriton.CompilerParams(num_warps=4, num_stages=2))(x)


def target():
    return double, (jax.ShapeDtypeStruct((128,), jnp.float32),), "triton"
