"""Clean: an interpreted kernel (a CLI flag decides) whose semaphore is scratch."""
# fix-rate: clean
import sys

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def make(interpret):
    def body(x_ref, o_ref, sem):
        pl.semaphore_signal(sem)
        pl.semaphore_wait(sem)
        o_ref[...] = x_ref[...] + 3.0

    return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128,), jnp.float32),
                        scratch_types=[plgpu.SemaphoreType.REGULAR], interpret=interpret)


def target():
    return make(True), (jnp.ones((128,), jnp.float32),), "interpret"


def expected():
    return jnp.full((128,), 4.0, jnp.float32)


if __name__ == "__main__":
    print(make("--interpret" in sys.argv)(jnp.ones((128,), jnp.float32)))
