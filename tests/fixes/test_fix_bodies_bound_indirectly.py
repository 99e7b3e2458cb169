"""Bodies the launch reaches indirectly (a decorator-filled registry, a lambda handing its refs on) get a new
parameter only where every launch and call of them is known; otherwise no scratch fix is offered. A helper
returning a get_global becomes a helper returning the type only where every use of it is a call whose
caller can allocate the buffer with pl.run_scoped."""

from __future__ import annotations

import pytest

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)
"""

REGISTRY = """
BODIES = {}


def register(name):
  def add(fn):
    BODIES[name] = fn
    return fn
  return add


def fetch(src, dst):
  bar = pl.get_global(plgpu.Barrier(num_arrivals=1))
  plgpu.copy_gmem_to_smem(src, dst, barrier=bar)
  plgpu.barrier_wait(bar)


@register("neg")
def negated(x_ref, o_ref, tile):
  fetch(x_ref, tile)
  o_ref[...] = -tile[...]


def run(name, x):
  body = BODIES[name]
  return plgpu.kernel(body, out_type=X, scratch_types=[plgpu.SMEM((128,), jnp.float32)])(x)
"""

NOT_OFFERED = {
    # the registry's bodies are also read otherwise: a caller of `.values()` would call them without the barrier
    "registry read by .values()": REGISTRY + """

def every(x):
  return [plgpu.kernel(b, out_type=X, scratch_types=[plgpu.SMEM((128,), jnp.float32)])(x) for b in BODIES.values()]
""",
    # a registered body also called by name: that call would not pass the barrier
    "registered body also called": REGISTRY + """

def inline(x_ref, o_ref, tile):
  negated(x_ref, o_ref, tile)
""",
    # the decorator wraps the function (returns another one): the registered object is not the body
    "decorator returns a wrapper": REGISTRY.replace("    return fn\n", "    return lambda *a: fn(*a)\n"),
    # the lambda hands on its refs, but the function is also launched directly elsewhere with other refs
    "forwarding lambda and another use": """
def body(n, x_ref, o_ref):
  buf = pl.get_global(plgpu.SMEM((128,), jnp.float32))
  buf[...] = x_ref[...] * n
  o_ref[...] = buf[...]


f = plgpu.kernel(lambda *refs: body(2.0, *refs), out_type=X)
g = body
""",
}

SHARED_HELPER = """
def staging(n):
  return pl.get_global(plgpu.SMEM((n,), jnp.float32))


def body(x_ref, o_ref):
  buf = staging(128)
  buf[...] = x_ref[...]
  o_ref[...] = buf[...]


def other(x_ref, o_ref):
  buf = staging(128)
  buf[...] = x_ref[...] + 1.0
  o_ref[...] = buf[...]


f = plgpu.kernel(body, out_type=X)
g = plgpu.kernel(other, out_type=X)
"""

HELPER_NOT_OFFERED = {
    # one caller stores into the call's result directly: no name to scope the rest of its body for
    "a call used as an expression": SHARED_HELPER + """

def third(x_ref, o_ref):
  staging(128)[...] = x_ref[...]
  o_ref[...] = x_ref[...]


h = plgpu.kernel(third, out_type=X)
""",
    # one caller returns the buffer: it would outlive pl.run_scoped
    "a caller returning the buffer": SHARED_HELPER.replace("  o_ref[...] = buf[...]\n\n\nf =",
                                                           "  return buf\n\n\nf ="),
    # the helper is passed on: its receiver expects a buffer, not a type
    "the helper passed on": SHARED_HELPER + """
GETTERS = [staging]
""",
}


@pytest.mark.parametrize("name", HELPER_NOT_OFFERED)
def test_a_helper_keeps_returning_the_buffer_where_a_use_needs_it(ws, name):
    findings = [f for f in ws.findings("kernel.py", HEADER + HELPER_NOT_OFFERED[name]) if f.code == "PAL001"]
    assert findings, "the case must have a finding"
    for finding in findings:
        titles = [fix.title for fix in ws.fixes(finding)]
        assert not any("pl.run_scoped where it is called" in title for title in titles), titles
        if name != "a caller returning the buffer":  # as scratch (helper_type_scratch) it lives the whole kernel
            assert not any("returns its type" in title for title in titles), titles


def test_a_helper_two_bodies_call_returns_the_type(ws):
    """The shape the refusals above vary: offered (see the golden case run_scoped_where_a_shared_helper_is_called)."""
    [finding] = [f for f in ws.findings("kernel.py", HEADER + SHARED_HELPER) if f.code == "PAL001"]
    assert "pallas-lsp (PAL001): Allocate what staging gives with pl.run_scoped where it is called (body, other); " \
           "staging returns its type (the helper and its call sites are edited)" in [f.title for f in ws.fixes(finding)]


@pytest.mark.parametrize("name", NOT_OFFERED)
def test_no_scratch_where_a_body_is_reached_otherwise_too(ws, name):
    findings = [f for f in ws.findings("kernel.py", HEADER + NOT_OFFERED[name]) if f.code == "PAL001"]
    assert findings, "the case must have a finding"
    for finding in findings:
        assert not any("scratch" in fix.title for fix in ws.fixes(finding)), [f.title for f in ws.fixes(finding)]


def test_the_registry_case_itself_is_fixed(ws):
    """The shape the refusals above vary: offered, every registered body takes the barrier."""
    [finding] = [f for f in ws.findings("kernel.py", HEADER + REGISTRY) if f.code == "PAL001"]
    titles = [fix.title for fix in ws.fixes(finding)]
    assert "pallas-lsp (PAL001): Allocate bar as scratch (scratch_types), through fetch" in titles
