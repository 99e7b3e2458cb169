"""A Triton pallas_call whose programs publish readiness through a global semaphore (Triton has none)."""
# fix-rate: kind=none meaning=none
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def _kernel(x_ref, o_ref):
    ready = pl.get_global(plgpu.SemaphoreType.REGULAR)
    o_ref[...] = x_ref[...] * 2.0
    pl.semaphore_signal(ready)


def scale(x):
    return pl.pallas_call(_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(4,),
                          in_specs=[pl.BlockSpec((32,), lambda i: (i,))],
                          out_specs=pl.BlockSpec((32,), lambda i: (i,)))(x)


def target():
    return scale, (jax.ShapeDtypeStruct((128,), jnp.float32),), "triton"
