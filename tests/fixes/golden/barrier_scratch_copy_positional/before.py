"""A TMA copy whose completion barrier, a global semaphore, is passed positionally
(`plgpu.copy_gmem_to_smem(src, dst, barrier)`, as jax's own examples write it): the semaphore is used only as a
barrier, so it becomes an SMEM barrier in scratch_types.

(Before, the positional barrier was taken for another use of the semaphore, and no fix was offered: jax 0.12
'ValueError: barrier must be a SMEM reference, got Ref<gmem>{semaphore[]}'.)
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_gmem, o_gmem):
    def scoped(tile):
        done = pl.get_global(plgpu.SemaphoreType.REGULAR)
        plgpu.copy_gmem_to_smem(x_gmem, tile, done)
        plgpu.barrier_wait(done)
        o_gmem[...] = tile[...] + 1.0

    pl.run_scoped(scoped, plgpu.SMEM((128,), jnp.float32))


def target():
    return plgpu.kernel(body, out_type=X), (X,), "cuda"
