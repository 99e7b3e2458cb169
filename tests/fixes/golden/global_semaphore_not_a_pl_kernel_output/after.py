"""pl.kernel on a plgpu.Mesh with a "ready" semaphore declared as an output."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
    ready_ref = pl.get_global(plgpu.SemaphoreType.REGULAR)
    o_ref[...] = x_ref[...] * 2.0
    pl.semaphore_signal(ready_ref)


def step(x):
    mesh = plgpu.Mesh(grid=(2,), grid_names=("blocks",))
    return pl.kernel(body, out_type=(X,), mesh=mesh)(x)


def target():
    return step, (X,), "cuda"
