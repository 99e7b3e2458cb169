"""A method launches its warp-level function with `pl.core_map(self.mesh)(per_warp)`, the WarpMesh its
constructor made; the function asks for the global semaphores itself: the get_global moves to the method's
own (kernel-level) code, before the function.

(Before: no finding; the mesh held by `self` was not followed.)
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


class Kernel:
    def __init__(self, warps):
        self.warps = warps
        self.mesh = plgpu.WarpMesh(axis_name="warp")

    def _warp_region(self):
        def per_warp():
            flags = pl.get_global(plgpu.SemaphoreType.REGULAR((self.warps,)))
            warp = jax.lax.axis_index("warp")
            for w in range(self.warps):
                @pl.when(warp == w)
                def _():
                    pl.semaphore_signal(flags.at[w])
                    pl.semaphore_wait(flags.at[w])

        pl.core_map(self.mesh)(per_warp)

    def body(self, x_ref, o_ref):
        o_ref[...] = x_ref[...] * 3.0
        self._warp_region()

    def __call__(self, x):
        return plgpu.kernel(self.body, out_type=X)(x)


def target():
    return Kernel(2), (X,), "cuda"
