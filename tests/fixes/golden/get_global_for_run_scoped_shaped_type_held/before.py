"""Each block adds the block before it, handing a flag on through a per-block semaphore array."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

ROWS = 64


def prefix_body(x_gmem, o_gmem, tile, prev, bar, prev_bar, *, blocks):
    b = pl.program_id(0)
    rows = pl.ds(b * ROWS, ROWS)
    flag_kind = plgpu.SemaphoreType.REGULAR((blocks,))

    def with_flags(flags):
        plgpu.copy_gmem_to_smem(x_gmem.at[rows], tile, bar)
        plgpu.barrier_wait(bar)

        @pl.when(b > 0)
        def _wait():
            pl.semaphore_wait(flags.at[b], 1)
            plgpu.copy_gmem_to_smem(o_gmem.at[pl.ds((b - 1) * ROWS, ROWS)], prev, prev_bar)
            plgpu.barrier_wait(prev_bar)
            tile[...] = tile[...] + prev[...]

        plgpu.commit_smem()
        plgpu.copy_smem_to_gmem(tile, o_gmem.at[rows])
        plgpu.wait_smem_to_gmem(0)

        @pl.when(b + 1 < blocks)
        def _signal():
            pl.semaphore_signal(flags.at[b + 1], 1)

    pl.run_scoped(with_flags, flag_kind, collective_axes="b")


def prefix(x):
    blocks = x.shape[0] // ROWS
    smem = plgpu.SMEM((ROWS, x.shape[1]), x.dtype)
    return plgpu.kernel(
        functools.partial(prefix_body, blocks=blocks),
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(blocks,),
        grid_names=("b",),
        scratch_types=[smem, smem, plgpu.Barrier(num_arrivals=1), plgpu.Barrier(num_arrivals=1)],
    )(x)


def target():
    return prefix, (jax.ShapeDtypeStruct((256, 128), jnp.float32),), "cuda"
