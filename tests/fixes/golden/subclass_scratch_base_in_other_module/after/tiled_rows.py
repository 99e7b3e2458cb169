"""A row-tiled Mosaic GPU kernel base class: subclasses say what happens to each tile."""

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


class TiledRows:
    rows = 64

    def scratch_types(self, x):
        return [plgpu.SMEM((self.rows, x.shape[1]), x.dtype), plgpu.Barrier(num_arrivals=1)]

    def compute(self, tile, *extra):
        raise NotImplementedError

    def _body(self, x_ref, o_ref, tile, barrier, *extra):
        rows = pl.ds(jax.lax.axis_index("rows") * self.rows, self.rows)
        plgpu.copy_gmem_to_smem(x_ref.at[rows], tile, barrier)
        plgpu.barrier_wait(barrier)
        self.compute(tile, *extra)
        plgpu.commit_smem()
        plgpu.copy_smem_to_gmem(tile, o_ref.at[rows])
        plgpu.wait_smem_to_gmem(0)

    def __call__(self, x):
        return plgpu.kernel(
            self._body,
            out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
            grid=(x.shape[0] // self.rows,),
            grid_names=("rows",),
            scratch_types=self.scratch_types(x),
        )(x)
