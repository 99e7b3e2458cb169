"""Clean: a TPU DMA whose semaphore is scratch of the pallas_call."""
# fix-rate: clean
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _copy(x_hbm, o_ref, buf, sem):
    dma = pltpu.make_async_copy(x_hbm, buf, sem)
    dma.start()
    dma.wait()
    o_ref[...] = buf[...] * 2.0


def copy_rows(x):
    return pl.pallas_call(_copy, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                          scratch_shapes=[pltpu.VMEM(x.shape, x.dtype), pltpu.SemaphoreType.DMA])(x)


def target():
    return copy_rows, (jax.ShapeDtypeStruct((8, 128), jnp.float32),), "tpu"
