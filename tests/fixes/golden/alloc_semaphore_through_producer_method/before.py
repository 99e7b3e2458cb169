"""A producer method returning its launch, whose semaphore output the caller unpacks and hands to a consumer
method: the caller allocates it with plgpu.alloc_semaphore and passes it through the producer method.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

ROW = jax.ShapeDtypeStruct((128,), jnp.float32)


class Relay:
    def _produce(self, x_ref, y_ref, flag_ref):
        y_ref[...] = x_ref[...] + 1.0
        pl.semaphore_signal(flag_ref)

    def _consume(self, y_ref, flag_ref, z_ref):
        pl.semaphore_wait(flag_ref)
        z_ref[...] = y_ref[...] * 3.0

    def produce(self, x):
        """The first stage."""
        return plgpu.kernel(self._produce, out_type=(ROW, plgpu.SemaphoreType.REGULAR))(x)

    def consume(self, y, flag):
        return plgpu.kernel(self._consume, out_type=ROW)(y, flag)

    def __call__(self, x):
        y, flag = self.produce(x)
        return self.consume(y, flag)


def target():
    return Relay(), (ROW,), "cuda"
