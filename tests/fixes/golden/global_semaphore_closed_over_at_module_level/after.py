"""A done flag made with get_global at module level, which the kernel body closes over: the get_global moves
into the body (the name stays), so it is asked for where a global semaphore exists.

(Before, no fix: 'which kernel this semaphore belongs in is not known'; jax 0.12 fails at import,
'NotImplementedError: Evaluation rule for 'get_global' not implemented'.)
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
    DONE = pl.get_global(plgpu.SemaphoreType.REGULAR)
    o_ref[...] = x_ref[...] * 3.0

    @pl.when(jax.lax.axis_index("blocks") >= 0)
    def _():
        pl.semaphore_signal(DONE)

    pl.semaphore_wait(DONE)


def target():
    return plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("blocks",)), (X,), "cuda"
