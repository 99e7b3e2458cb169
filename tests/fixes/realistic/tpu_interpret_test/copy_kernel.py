"""A TPU row copy whose DMA semaphore comes from get_global; its test runs it under the TPU interpreter."""
# fix-rate: kind=scratch meaning=preserving
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _copy(x_hbm, o_ref, buf):
    sem = pl.get_global(pltpu.SemaphoreType.DMA)
    dma = pltpu.make_async_copy(x_hbm, buf, sem)
    dma.start()
    dma.wait()
    o_ref[...] = buf[...] * 2.0


def copy_rows(x):
    return pl.pallas_call(_copy, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                          scratch_shapes=[pltpu.VMEM(x.shape, x.dtype)])(x)


def target():
    def run(x):
        with pltpu.force_tpu_interpret_mode():
            return copy_rows(x)

    return run, (jnp.ones((8, 128), jnp.float32),), "interpret"


def expected():
    return jnp.full((8, 128), 2.0, jnp.float32)
