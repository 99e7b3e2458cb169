"""A buffer made by a helper from a keyword scratch ref's shape and the input ref's dtype, in a `with
jax.named_scope` block (`pl.get_global(_f32_like(staged.shape))`, `staged` of a dict `scratch_types`): the launch
calls the helper with that scratch type's shape, and the buffer becomes one more keyword scratch ref.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

ROWS = 64


def _f32_like(shape):
    return plgpu.SMEM(shape, jnp.float32)


def _shift_body(x_ref, o_ref, *, staged, ready):
    block = jax.lax.axis_index("rows")
    rows = pl.ds(block * ROWS, ROWS)
    plgpu.copy_gmem_to_smem(x_ref.at[rows], staged, ready)
    plgpu.barrier_wait(ready)
    with jax.named_scope("shift"):
        work = pl.get_global(_f32_like(staged.shape))
        work[...] = staged[...].astype(jnp.float32) + 1.0
        staged[...] = work[...].astype(x_ref.dtype)
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(staged, o_ref.at[rows])
    plgpu.wait_smem_to_gmem(0)


def shifted(x):
    n, d = x.shape
    return plgpu.kernel(
        _shift_body,
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(n // ROWS,),
        grid_names=("rows",),
        scratch_types=dict(staged=plgpu.SMEM((ROWS, d), x.dtype), ready=plgpu.Barrier(num_arrivals=1)),
    )(x)


def target():
    return shifted, (jnp.ones((128, 128), jnp.bfloat16),), "cuda"
