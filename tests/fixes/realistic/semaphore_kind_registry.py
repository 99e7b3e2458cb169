"""A registry of semaphore kinds (dict); the kernel picks the 'flag' kind, registered as a BARRIER semaphore."""
# fix-rate: kind=regular_semaphore meaning=preserving
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

SEMAPHORE_KINDS = {
    "flag": plgpu.SemaphoreType.BARRIER,
}


def handoff(x):
    def body(x_ref, o_ref):
        flag = pl.get_global(SEMAPHORE_KINDS["flag"])
        o_ref[...] = x_ref[...] + 1.0
        pl.semaphore_signal(flag)
        pl.semaphore_wait(flag)

    return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(2,), grid_names=("b",))(x)


def target():
    return handoff, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
