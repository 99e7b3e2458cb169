"""A TPU DMA given the whole semaphore array instead of one of its semaphores: JAX rejects it."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def body(x_hbm, o_ref, buf, sems):
    copy = pltpu.make_async_copy(x_hbm, buf, sems)
    copy.start()
    copy.wait()
    o_ref[...] = buf[...]


def run(x, slots=2):
    return pl.pallas_call(
        body,
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        scratch_shapes=[pltpu.VMEM(x.shape, x.dtype), pltpu.SemaphoreType.DMA((slots,))],
    )(x)


if __name__ == "__main__":
    run(jnp.ones((8, 128), jnp.float32))
