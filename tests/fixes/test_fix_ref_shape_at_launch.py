"""The scratch fix writes a type built from a pallas_call body ref's `.shape` with that ref's BlockSpec block shape
at the launch (golden case scratch_tpu_vmem_shape_of_output_ref), only where the block keeps every dimension."""

from __future__ import annotations


def test_a_ref_shape_whose_block_squeezes_a_dimension_is_not_carried(ws):
    """`o_ref.shape` is the output BlockSpec's block shape at the launch only where it keeps every dimension: with
    `None` in it (squeezed) the ref has fewer, so the VMEM scratch is not written with the block shape."""
    from pallas_lsp.fixes import fixes_and_reason

    [finding] = ws.findings("kernel.py", '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_ref, o_ref):
    acc = pl.get_global(pltpu.VMEM(o_ref.shape, jnp.float32))
    acc[...] = x_ref[...]
    o_ref[...] = acc[...]


def run(x, bn):
    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=0,
            in_specs=[pl.BlockSpec((None, bn), lambda i: (i, 0))],
            out_specs=pl.BlockSpec((None, bn), lambda i: (i, 0)),
            grid=(x.shape[0],),
        ),
    )(x)
''')
    assert not any("scratch" in fix.title for fix in ws.fixes(finding))
    assert "depends on o_ref" in fixes_and_reason(ws.project, finding)[1]


def test_a_named_spec_list_changed_in_place_is_not_read(ws):
    """A spec list named before the launch is that list only where nothing changes it in place: after
    `in_specs.insert(0, ...)` its second element is no longer `w_ref`'s spec, so the block shape is not taken from it."""
    from pallas_lsp.fixes import fixes_and_reason

    [finding] = ws.findings("kernel.py", '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(b_ref, x_ref, w_ref, o_ref):
    acc = pl.get_global(pltpu.VMEM(w_ref.shape, jnp.float32))
    acc[...] = x_ref[...] * w_ref[...] + b_ref[...]
    o_ref[...] = acc[...]


def run(b, x, w, bk, bn):
    in_specs = [pl.BlockSpec((bk, bn), lambda j: (0, j)), pl.BlockSpec((bk, 2 * bn), lambda j: (0, j))]
    in_specs.insert(0, pl.BlockSpec((bk, bn), lambda j: (0, j)))
    return pl.pallas_call(
        kernel,
        grid=(w.shape[1] // bn,),
        in_specs=in_specs,
        out_specs=pl.BlockSpec((bk, bn), lambda j: (0, j)),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
    )(b, x, w)
''')
    assert not any("scratch" in fix.title for fix in ws.fixes(finding))
    assert "depends on w_ref" in fixes_and_reason(ws.project, finding)[1]
