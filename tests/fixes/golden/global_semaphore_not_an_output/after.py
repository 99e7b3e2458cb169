"""A grid-wide "done" flag declared as a kernel output, next to the real one."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((256,), jnp.float32)


def body(x_ref, o_ref):
    """Doubles x; every block signals when its part is written."""
    done_ref = pl.get_global(plgpu.SemaphoreType.REGULAR)
    o_ref[...] = x_ref[...] * 2.0
    pl.semaphore_signal(done_ref)


kernel = plgpu.kernel(
    body,
    out_type=[X],
    grid=(2,),
    grid_names=("blocks",),
)


def target():
    return kernel, (X,), "cuda"
