"""Warp-specialised code: the warp-level region fetches the global semaphore itself."""
# fix-rate: kind=warp_hoist meaning=preserving
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def body(x_ref, o_ref):
    @pl.core_map(plgpu.WarpMesh(axis_name="warp"))
    def _per_warp():
        flag = pl.get_global(plgpu.SemaphoreType.REGULAR)
        pl.semaphore_signal(flag)

    o_ref[...] = x_ref[...] + 1.0


def target():
    x = jax.ShapeDtypeStruct((128,), jnp.float32)
    return plgpu.kernel(body, out_type=x, grid=(2,), grid_names=("blocks",)), (x,), "cuda"
