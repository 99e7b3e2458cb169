"""Two warpgroups meet at a barrier; the barrier is a global semaphore from a helper of the module."""
# fix-rate: kind=barrier_scratch meaning=preserving
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def sync_point():
    return pl.get_global(plgpu.SemaphoreType.REGULAR)


def body(x_ref, o_ref):
    meet = sync_point()
    plgpu.barrier_arrive(meet)
    plgpu.barrier_wait(meet)
    o_ref[...] = x_ref[...] + 1.0


def target():
    x = jax.ShapeDtypeStruct((128,), jnp.float32)
    return plgpu.kernel(body, out_type=x), (x,), "cuda"
