"""Blocks accumulate their rows into a global GMEM buffer that the last block reads (no such global buffer)."""
# fix-rate: kind=none meaning=none
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def body(x_ref, o_ref):
    partial = pl.get_global(plgpu.GMEM((128,), jnp.float32))
    partial[...] = partial[...] + x_ref[...]

    @pl.when(jax.lax.axis_index("blocks") == 3)
    def _():
        o_ref[...] = partial[...]


def target():
    x = jax.ShapeDtypeStruct((128,), jnp.float32)
    return plgpu.kernel(body, out_type=x, grid=(4,), grid_names=("blocks",)), (x,), "cuda"
