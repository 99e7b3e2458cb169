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


def test_an_input_ref_is_not_read_from_the_outputs_when_in_specs_is_a_list_of_unknown_length(ws):
    """`in_specs=specs` (a name holding a helper's list) has as many specs as the helper makes: `w_ref`, the second
    input, is not the output's spec, which counting through a list of one would give; only the output's `o_ref`
    is counted from the end."""
    from pallas_lsp.fixes import fixes_and_reason

    [finding] = ws.findings("kernel.py", '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_ref, w_ref, o_ref):
    acc = pl.get_global(pltpu.VMEM(w_ref.shape, jnp.float32))
    acc[...] = x_ref[...] * w_ref[...]
    o_ref[...] = acc[...]


def make_specs(bk, bn):
    return [pl.BlockSpec((bk, bn), lambda j: (0, j)), pl.BlockSpec((bk, 2 * bn), lambda j: (0, j))]


def run(x, w, bk, bn):
    specs = make_specs(bk, bn)
    return pl.pallas_call(
        kernel,
        grid=(w.shape[1] // bn,),
        in_specs=specs,
        out_specs=pl.BlockSpec((bk, bn), lambda j: (0, j)),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
    )(x, w)
''')
    assert not any("scratch" in fix.title for fix in ws.fixes(finding))
    assert "depends on w_ref" in fixes_and_reason(ws.project, finding)[1]


def test_a_type_is_not_carried_to_another_module_that_does_not_import_its_names(ws):
    """In a launch of another module, a module constant of the kernel's module that the launch's module does not
    import (`TILE_ROWS`) has no counterpart there: the type is not written with it."""
    from pallas_lsp.fixes import fixes_for

    ws.write("tiles_kernel.py", '''
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

TILE_ROWS = 16


def body(x_gmem, o_gmem, *, cols):
    staged = pl.get_global(plgpu.SMEM((TILE_ROWS, cols), jnp.float32))
    staged[...] = x_gmem[...]
    o_gmem[...] = staged[...]
''')
    ws.write("tiles_ops.py", '''
import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

from tiles_kernel import body


def run(x):
    return plgpu.kernel(functools.partial(body, cols=x.shape[1]), out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
''')
    [finding] = [f for f in ws.findings("tiles_kernel.py") if f.code == "PAL001"]
    assert not any("TILE_ROWS" in edit.new_text for fix in fixes_for(ws.project, finding) for edit in fix.edits)
