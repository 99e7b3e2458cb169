"""One launch writes a global GMEM buffer the next launch reads, expecting it to persist (no such buffer)."""
# fix-rate: kind=none meaning=none
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

CACHE = plgpu.GMEM((128,), jnp.float32)


def _store(x_ref, o_ref):
    cache = pl.get_global(CACHE)
    cache[...] = x_ref[...]
    o_ref[...] = x_ref[...]


def _load(x_ref, o_ref):
    cache = pl.get_global(CACHE)
    o_ref[...] = x_ref[...] + cache[...]


def twice(x):
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    y = plgpu.kernel(_store, out_type=out)(x)
    return plgpu.kernel(_load, out_type=out)(y)


def target():
    return twice, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
