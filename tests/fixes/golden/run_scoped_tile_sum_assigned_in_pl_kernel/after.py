"""A pl.kernel over a plgpu.Mesh whose row sums are staged in an SMEM tile asked of get_global and handed to the
helper that stages them; the helper returns the tile's value, which the body keeps (`total = stage(...)`):
`pl.run_scoped(stage, ...)` allocates the tile for exactly that call and returns the same value."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((256, 128), jnp.float32)


def row_sums(x_gmem, o_gmem):
    block = jax.lax.axis_index("blocks")
    rows = pl.ds(block * 128, 128)

    def stage(tile_ref):
        tile_ref[...] = x_gmem[rows] * 0.5
        return tile_ref[...] + x_gmem[rows] * 0.5

    total = pl.run_scoped(stage, plgpu.SMEM((128, 128), jnp.float32))
    o_gmem[rows] = total


def target():
    kernel = pl.kernel(row_sums, out_type=X, mesh=plgpu.Mesh(grid=(2,), grid_names=("blocks",)))
    return kernel, (X,), "cuda"
