"""The semaphore type given to get_global twice, positionally and as what=."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)
FLAG = plgpu.SemaphoreType.REGULAR


def body(x_ref, o_ref):
    ready = pl.get_global(FLAG, what=FLAG)
    pl.semaphore_signal(ready)
    o_ref[...] = x_ref[...]


def target():
    return plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("blocks",)), (X,), "cuda"
