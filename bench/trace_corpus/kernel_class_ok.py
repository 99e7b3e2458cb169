"""A kernel class: the body is a method, the launch in __call__."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


class Accumulate:
    def __init__(self, n, dtype=jnp.float32):
        self.n = n
        self.dtype = dtype

    def body(self, x_ref, o_ref):
        sem = pl.get_global(plgpu.SemaphoreType.REGULAR)
        pl.semaphore_signal(sem)
        pl.semaphore_wait(sem)
        o_ref[...] = x_ref[...] + 1.0

    def __call__(self, x):
        return plgpu.kernel(self.body, out_type=jax.ShapeDtypeStruct((self.n,), self.dtype))(x)


if __name__ == "__main__":
    op = Accumulate(256)
    op(jnp.ones((256,), jnp.float32))
