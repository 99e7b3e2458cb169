"""A TPU kernel whose blocks hand a token around the grid through a global semaphore (no TPU equivalent)."""
# fix-rate: kind=none meaning=none
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _ring(x_ref, o_ref):
    token = pl.get_global(pltpu.SemaphoreType.REGULAR)

    @pl.when(pl.program_id(0) > 0)
    def _():
        pl.semaphore_wait(token)

    o_ref[...] = x_ref[...] + 1.0
    pl.semaphore_signal(token)


def ring(x):
    return pl.pallas_call(_ring, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(4,),
                          in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
                          out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)))(x)


def target():
    return ring, (jax.ShapeDtypeStruct((32, 128), jnp.float32),), "tpu"
