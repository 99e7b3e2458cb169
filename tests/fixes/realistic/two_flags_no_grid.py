"""A gridless kernel class with two phase flags, each a global semaphore (a JAX bug without a grid)."""
# fix-rate: kind=semaphore_array meaning=preserving
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


class TwoPhase:
    def body(self, x_ref, o_ref):
        loaded = pl.get_global(plgpu.SemaphoreType.REGULAR)
        stored = pl.get_global(plgpu.SemaphoreType.REGULAR)
        pl.semaphore_signal(loaded)
        pl.semaphore_wait(loaded)
        o_ref[...] = x_ref[...] + 1.0
        pl.semaphore_signal(stored)
        pl.semaphore_wait(stored)

    def __call__(self, x):
        return plgpu.kernel(self.body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def target():
    return TwoPhase(), (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
