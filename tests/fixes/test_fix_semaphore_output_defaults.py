"""The out_type semaphore made global in a body with defaulted parameters: only where it is known which parameter
JAX gives that output. A default of `None` may take a ref (`mean_ref=None`): with the operands not known, the
output may be that parameter, so no fix; a value default (a semaphore kind, a size) takes none."""

from __future__ import annotations

import pytest

from test_fixes_not_offered import HEADER

BODY = '''
def body(x_ref, o_ref, flags_ref, extra{default}, *, scale):
  pl.semaphore_signal(flags_ref)
  pl.semaphore_wait(flags_ref)
  o_ref[...] = x_ref[...] * scale

def make():
  return jax.jit(plgpu.kernel(functools.partial(body, scale=2.0), out_type=(X, plgpu.SemaphoreType.REGULAR),
                              grid=(2,), grid_names=("x",)))
'''
TITLE = "Make flags_ref a global semaphore (pl.get_global in the body), not an output"


@pytest.mark.parametrize("default, offered", [("=4", True), ("=plgpu.SemaphoreType.REGULAR", True), ("=None", False)])
def test_a_defaulted_parameter_keeps_the_fix_only_where_it_takes_no_ref(ws, default, offered):
    ws.write("kernel.py", HEADER + BODY.format(default=default))
    [finding] = [f for f in ws.findings("kernel.py") if f.code == "PAL008"]
    assert any(TITLE in fix.title for fix in ws.fixes(finding)) is offered
