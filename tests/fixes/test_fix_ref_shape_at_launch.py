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
