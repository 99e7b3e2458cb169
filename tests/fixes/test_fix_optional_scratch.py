"""The optional-scratch fix (a body's `acc=None` parameter with a get_global fallback, given as scratch by some
launches) is offered only where which launches give the parameter is known from what they write."""

from __future__ import annotations

import pytest

KERNEL = """
import functools
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, {params}):
    if acc is None:
        acc = pl.get_global(plgpu.SMEM((128,), jnp.float32))
    acc[...] = x_ref[...] * 2.0
    o_ref[...] = acc[...]


def tuned(x):
    scratch = [plgpu.SMEM((128,), jnp.float32)]
    return plgpu.kernel(body, out_type=X, scratch_types={tuned_scratch})(x)


def fast(x):
    return plgpu.kernel(body, out_type=X)(x)
"""
TITLE = "Allocate acc as scratch (scratch_types) in fast too, as the other launches do; the get_global fallback goes"


def _titles(ws, params: str, tuned_scratch: str) -> list[str]:
    findings = [f for f in ws.findings("kernel.py", KERNEL.format(params=params, tuned_scratch=tuned_scratch))
                if f.code == "PAL001"]
    assert len(findings) == 1
    return [fix.title for fix in ws.fixes(findings[0])]


def test_offered_where_the_other_launch_writes_its_scratch(ws):
    assert f"pallas-lsp (PAL001): {TITLE}" in _titles(ws, "acc=None", "[plgpu.SMEM((128,), jnp.float32)]")


@pytest.mark.parametrize("params, tuned_scratch", [
    ("acc=None", "scratch"),  # a list held elsewhere: whether it reaches `acc` is not known
    ("acc=None, flag=False", "[plgpu.SMEM((128,), jnp.float32)]"),  # `acc` is not the last positional parameter
    # Two optional parameters: the tuned launch's one scratch fills `stage`, and `acc` stays None there too.
    ("stage=None, acc=None", "[plgpu.SMEM((128,), jnp.float32)]"),
    # Two scratch buffers at the tuned launch: one fills a parameter of the body before `acc`.
    ("acc=None", "[plgpu.SMEM((128,), jnp.float32), plgpu.SMEM((128,), jnp.float32)]"),
])
def test_not_offered_where_which_launch_gives_it_is_not_known(ws, params, tuned_scratch):
    assert f"pallas-lsp (PAL001): {TITLE}" not in _titles(ws, params, tuned_scratch)
