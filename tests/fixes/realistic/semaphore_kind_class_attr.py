"""Semaphore kinds as class attributes of a registry class; the one picked is a TPU semaphore in a GPU kernel."""
# fix-rate: kind=regular_semaphore meaning=preserving
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu


class Sync:
    READY = pltpu.SemaphoreType.REGULAR


class Stage:
    sync = Sync

    def body(self, x_ref, o_ref):
        ready = pl.get_global(self.sync.READY)
        o_ref[...] = x_ref[...] * 2.0
        pl.semaphore_signal(ready)
        pl.semaphore_wait(ready)

    def run(self, x):
        return plgpu.kernel(self.body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(4,),
                            grid_names=("blocks",))(x)


def target():
    return Stage().run, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
