"""Warp-specialised code whose warp-level function (`@pl.core_map(plgpu.WarpMesh(...))`) asks for the global
semaphore itself: the get_global moves to the kernel code just before it, which the warp function closes over.

(Before, no fix: 'this backend has no global semaphore'; jax 0.12 'Unimplemented primitive in Pallas Mosaic GPU
lowering: get_global for lowering semantics LoweringSemantics.Warpgroup and user thread semantics ... Warp'.)
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def body(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1.0

    flag = pl.get_global(plgpu.SemaphoreType.REGULAR)

    # every warp reports once
    @pl.core_map(plgpu.WarpMesh(axis_name="warp"))
    def _per_warp():
        pl.semaphore_signal(flag)


def target():
    x = jax.ShapeDtypeStruct((128,), jnp.float32)
    return plgpu.kernel(body, out_type=x, grid=(2,), grid_names=("blocks",)), (x,), "cuda"
