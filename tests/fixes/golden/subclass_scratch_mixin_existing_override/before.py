"""Row kernels: a base class launches, a mixin logs, subclasses extend the scratch they need."""

import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


class NamedMixin:
    def describe(self):
        return type(self).__name__


@dataclasses.dataclass(frozen=True)
class RowKernel:
    rows: int = 64

    def scratch_types(self, x):
        return [plgpu.SMEM((self.rows, x.shape[1]), x.dtype), plgpu.Barrier(num_arrivals=1)]

    def compute(self, tile, *scratch):
        raise NotImplementedError

    def _body(self, x_ref, o_ref, tile, ready, *scratch):
        block = jax.lax.axis_index("rows")
        rows = pl.ds(block * self.rows, self.rows)
        plgpu.copy_gmem_to_smem(x_ref.at[rows], tile, ready)
        plgpu.barrier_wait(ready)
        self.compute(tile, *scratch)
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


@dataclasses.dataclass(frozen=True)
class Negate(NamedMixin, RowKernel):
    def compute(self, tile):
        tile[...] = -tile[...]


@dataclasses.dataclass(frozen=True)
class SquareAddOne(NamedMixin, RowKernel):
    """tile * tile + 1, through two f32 staging buffers."""

    def scratch_types(self, x):
        return super().scratch_types(x) + [plgpu.SMEM((self.rows, x.shape[1]), jnp.float32)]

    def compute(self, tile, squared):
        shape = tile.shape
        plus_one = pl.get_global(plgpu.SMEM(shape, jnp.float32))
        squared[...] = tile[...].astype(jnp.float32) * tile[...].astype(jnp.float32)
        plus_one[...] = squared[...] + 1.0
        tile[...] = plus_one[...].astype(tile.dtype)


def target():
    return SquareAddOne(), (jnp.ones((256, 128), jnp.float16),), "cuda"
