"""A body's buffer sized from a ref whose BlockSpec's block shape a call builds at the launch (`cfg.block(cols)`):
the scratch fix writes that call (or the item it returns), and is not offered where the call's tuple would give
the buffer another shape than the ref's (a squeezed `None` dimension)."""

from __future__ import annotations

KERNEL = """
import functools
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def row_block(width):
    return {block}


def double_kernel(x_ref, o_ref):
    staged = pl.get_global(pltpu.VMEM({size}, jnp.float32))
    staged[...] = x_ref[...] * 2.0
    o_ref[...] = staged[...]


@jax.jit
def double(x):
    rows, hidden = x.shape
    spec = pl.BlockSpec(row_block(hidden), lambda i: (i, 0))
    return pl.pallas_call(double_kernel, grid=(rows,), in_specs=[spec], out_specs=spec,
                          out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
"""


def _scratch_fix(ws, block: str, size: str):
    (finding,) = ws.findings("kernel.py", KERNEL.format(block=block, size=size))
    return [fix for fix in ws.fixes(finding) if "scratch" in fix.title]


def _scratch_line(ws, fix) -> str:
    (edit,) = [e for e in fix.edits if "scratch_shapes" in e.new_text]
    return " ".join(edit.new_text.replace(",", " ").split())


def test_whole_shape_is_the_call_and_an_item_is_what_it_returns(ws):
    (whole,) = _scratch_fix(ws, "(1, width)", "x_ref.shape")
    assert _scratch_line(ws, whole) == "scratch_shapes=[pltpu.VMEM(row_block(hidden) jnp.float32)]"
    (item,) = _scratch_fix(ws, "(1, width)", "(1, x_ref.shape[-1])")
    assert _scratch_line(ws, item) == "scratch_shapes=[pltpu.VMEM((1 hidden) jnp.float32)]"


def test_not_offered_where_the_built_block_squeezes_a_dimension(ws):
    assert _scratch_fix(ws, "(None, width)", "x_ref.shape") == []
