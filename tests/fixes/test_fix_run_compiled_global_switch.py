""""Run the kernel compiled" removes a global interpret switch (`with plgpu.force_gpu_interpret_mode():`,
`plgpu.set_gpu_interpret_mode()`, as the generated kernels of tests/kernel_generator/grammar.py write them)
only where nothing in the workspace runs the kernel on a CPU, where a compiled kernel does not run (jax 0.12:
'Only interpret mode is supported on CPU backend')."""

from __future__ import annotations

import pytest

from test_fixes_not_offered import HEADER

SWITCHED = {
    "force_gpu_interpret_mode around the call": '''
def body(x_ref, o_ref):
  bar = pl.get_global(plgpu.Barrier(num_arrivals=1))
  o_ref[...] = x_ref[...]

fn = plgpu.kernel(body, out_type=X)

def run(x):
  with plgpu.force_gpu_interpret_mode():
    return fn(x)
''',
    "set_gpu_interpret_mode before the launch": '''
def body(x_ref, o_ref):
  bar = pl.get_global(plgpu.Barrier(num_arrivals=1))
  o_ref[...] = x_ref[...]

def run(x):
  plgpu.set_gpu_interpret_mode()
  fn = plgpu.kernel(body, out_type=X)
  return fn(x)
''',
}


@pytest.mark.parametrize("name", SWITCHED)
def test_a_global_interpret_switch_is_removed_only_where_nothing_runs_the_kernel_on_a_cpu(ws, name):
    ws.write("kernel.py", HEADER + SWITCHED[name])
    [finding] = [f for f in ws.findings("kernel.py") if f.code == "PAL002"]
    assert any("Run the kernel compiled" in fix.title for fix in ws.fixes(finding))
    ws.write("tests/test_kernel.py", "import jax.numpy as jnp\nfrom kernel import run\n\n\ndef test_run():\n"
                                     "    run(jnp.ones((128,), jnp.float32))\n")
    [finding] = [f for f in ws.findings("kernel.py") if f.code == "PAL002"]
    assert not any("Run the kernel compiled" in fix.title for fix in ws.fixes(finding))
