"""The scratch fix writes a type the body computes from its refs with what the launch writes for them (golden cases
scratch_gpu_*_scratch_ref_*, scratch_tpu_ref_shape_*, scratch_interpret_output_ref_dtype_and_unpacked_shape), and
only where that means the same: not a dtype written as a scalar type (`jnp.float32`, a class) where the body's
helper reads an attribute of the dtype it is given, nor an item of a scratch list the launch changes after
writing it."""

from __future__ import annotations


def test_a_scalar_type_is_not_handed_to_a_helper_that_reads_the_dtype_attributes(ws):
    """`o_ref.dtype` is a dtype (`.itemsize` works); out_shape's `jnp.float32` is a class (`.itemsize` raises):
    handed to `buffer_for`, which reads `dtype.itemsize`, it would not mean the same, so it is not carried."""
    from pallas_lsp.fixes import fixes_and_reason

    [finding] = ws.findings("kernel.py", '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def buffer_for(dtype, shape):
    return pltpu.VMEM(shape, jnp.float32 if dtype.itemsize < 4 else dtype)


def kernel(x_ref, o_ref):
    acc = pl.get_global(buffer_for(o_ref.dtype, o_ref.shape))
    acc[...] = x_ref[...].astype(acc.dtype)
    o_ref[...] = acc[...].astype(o_ref.dtype)


def run(x):
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, jnp.float32))(x)
''')
    assert not any("scratch" in fix.title for fix in ws.fixes(finding))
    assert "depends on o_ref" in fixes_and_reason(ws.project, finding)[1]


def test_the_same_helper_given_the_operands_dtype_is_carried(ws):
    """The twin of the case above with the output typed `x.dtype`: a dtype, so the helper call moves as written."""
    [finding] = ws.findings("kernel.py", '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def buffer_for(dtype, shape):
    return pltpu.VMEM(shape, jnp.float32 if dtype.itemsize < 4 else dtype)


def kernel(x_ref, o_ref):
    acc = pl.get_global(buffer_for(o_ref.dtype, o_ref.shape))
    acc[...] = x_ref[...].astype(acc.dtype)
    o_ref[...] = acc[...].astype(o_ref.dtype)


def run(x):
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
''')
    [scratch] = [fix for fix in ws.fixes(finding) if "scratch" in fix.title]
    assert any("scratch_shapes=[buffer_for(x.dtype, x.shape)]" in edit.new_text for edit in scratch.edits)


def test_an_item_of_a_scratch_list_the_launch_changes_afterwards_is_not_read_by_its_index(ws):
    """`scratch.insert(1, ...)` moves the items of the list written before it: `tile` is not its item 1 (of shape
    (8, 128)), so the buffer is not typed with that item's shape (pl.run_scoped allocates it where it stands)."""
    [finding] = ws.findings("kernel.py", '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def body(x_ref, o_ref, flag, tile, other, barrier):
    plgpu.copy_gmem_to_smem(x_ref, tile, barrier)
    plgpu.barrier_wait(barrier)
    work = pl.get_global(plgpu.SMEM(tile.shape, jnp.float32))
    work[...] = tile[...].astype(jnp.float32)
    tile[...] = work[...].astype(tile.dtype)
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(tile, o_ref)
    plgpu.wait_smem_to_gmem(0)


def run(x):
    scratch = [plgpu.SMEM((8, 128), jnp.int32), plgpu.SMEM((8, 128), jnp.float32), plgpu.Barrier(num_arrivals=1)]
    scratch.insert(1, plgpu.SMEM(x.shape, x.dtype))
    return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), scratch_types=scratch)(x)
''')
    titles = [fix.title for fix in ws.fixes(finding)]
    assert not any("as scratch" in title for title in titles)
    assert any("pl.run_scoped" in title for title in titles)
