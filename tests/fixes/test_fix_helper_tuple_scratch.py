"""The fix of a helper returning several get_global buffers at once is offered only where its one call unpacks
them into names of a launched body: a second call would share the scratch, and a tuple kept whole (`pair =
helper()`) is no set of parameters."""

from __future__ import annotations

import pytest

KERNEL = """
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def two_tiles():
    first = pl.get_global(plgpu.SMEM((128,), jnp.float32))
    second = pl.get_global(plgpu.SMEM((128,), jnp.float32))
    return first, second


def body(x_ref, o_ref):
{body}

kernel = plgpu.kernel(body, out_type=X)
"""
TITLE = "pallas-lsp (PAL001): Allocate a, b as scratch (scratch_types) with what two_tiles returns, its types"


def _titles(ws, body: str) -> list[str]:
    findings = [f for f in ws.findings("kernel.py", KERNEL.format(body=body)) if f.code == "PAL001"]
    assert findings
    return [fix.title for f in findings for fix in ws.fixes(f)]


def test_offered_for_one_unpacked_call(ws):
    assert TITLE in _titles(ws, "    a, b = two_tiles()\n    a[...] = x_ref[...]\n    b[...] = a[...]\n"
                                "    o_ref[...] = b[...]")


@pytest.mark.parametrize("body", [
    # called twice: each call's buffers are buffers of their own
    "    a, b = two_tiles()\n    c, d = two_tiles()\n    a[...] = x_ref[...]\n    c[...] = a[...]\n"
    "    o_ref[...] = c[...] + b[...] + d[...]",
    # kept whole, indexed later
    "    pair = two_tiles()\n    pair[0][...] = x_ref[...]\n    o_ref[...] = pair[0][...] + pair[1][...]",
])
def test_not_offered_where_the_buffers_are_not_one_unpacking(ws, body):
    assert not any("with what two_tiles returns" in title for title in _titles(ws, body))
