"""A module with a Mosaic GPU path and a TPU path: the TPU pallas_call (it copies with pltpu.make_async_copy)
asks pl.get_global for its DMA semaphore, which the TPU lowers only as scratch: scratch_shapes at its launch.

(Before, PAL003 called the TPU pallas_call a Triton launch and offered no fix.)
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu


def gpu_body(x_ref, o_ref):
    sem = pl.get_global(plgpu.SemaphoreType.REGULAR)
    o_ref[...] = x_ref[...] + 1.0
    pl.semaphore_signal(sem)
    pl.semaphore_wait(sem)


def gpu_add(x):
    return plgpu.kernel(gpu_body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def tpu_body(x_hbm, o_ref, sem):
    copy = pltpu.make_async_copy(x_hbm, o_ref, sem)
    copy.start()
    copy.wait()
    o_ref[...] = o_ref[...] + 1.0


def tpu_add(x):
    return pl.pallas_call(tpu_body, in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                          out_specs=pl.BlockSpec((8, 128), lambda: (0, 0)),
                          out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                          scratch_shapes=[pltpu.SemaphoreType.DMA])(x)


def target():
    return tpu_add, (jax.ShapeDtypeStruct((8, 128), jnp.float32),), "tpu"
