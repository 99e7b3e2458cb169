"""A kernel returns its data and a flag semaphore; the caller unpacks both and ignores the flag."""
# fix-rate: kind=semaphore_output meaning=none
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def _body(x_ref, o_ref, flag_ref):
    o_ref[...] = x_ref[...] + 1.0
    pl.semaphore_signal(flag_ref)


def run(x):
    out, _flag = plgpu.kernel(_body, out_type=(jax.ShapeDtypeStruct(x.shape, x.dtype), plgpu.SemaphoreType.REGULAR),
                              grid=(2,), grid_names=("blocks",))(x)
    return out


def target():
    return run, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
