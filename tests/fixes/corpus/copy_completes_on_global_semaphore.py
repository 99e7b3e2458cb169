"""A TMA copy told to complete on a global semaphore, then waited on as a barrier."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
    copied = pl.get_global(plgpu.SemaphoreType.REGULAR)

    def stage(x_smem):
        plgpu.copy_gmem_to_smem(x_ref, x_smem, barrier=copied)
        plgpu.barrier_wait(copied)
        o_ref[...] = x_smem[...] * 2.0

    pl.run_scoped(stage, plgpu.SMEM((128,), jnp.float32))


def target():
    return plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("blocks",)), (X,), "cuda"
