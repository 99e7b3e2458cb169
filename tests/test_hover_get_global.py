"""The hover on a get_global says what the call is given, and never calls it "what get_global is
for" where a problem stands on the call (issue 25 §4): the hover and the squiggle under it agree."""

from __future__ import annotations

from pallas_lsp.analysis import Project
from pallas_lsp.analysis.hover import hover_text
from pallas_lsp.engine import analyze

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
"""
BODY = "def body(o_ref):\n    s = pl.get_global(plgpu.SemaphoreType.REGULAR)\n    pl.semaphore_signal(s)\n" \
       "    pl.semaphore_wait(s)\n\n"
OUT = "jax.ShapeDtypeStruct((128,), jnp.float32)"
HEAD = "**pl.get_global** of `plgpu.SemaphoreType.REGULAR`\n\nInferred: `Ref<gmem>{semaphore[]}`: "


def hover_on_get_global(ws, launch: str, with_findings: bool = True) -> tuple[str, list]:
    path = ws.write("kernel.py", HEADER + BODY + launch)
    text = path.read_text()
    index = text.index("get_global(")
    line, column = text.count("\n", 0, index), index - (text.rfind("\n", 0, index) + 1)
    project = Project(root=str(ws.root), python=ws.python, use_jedi=ws.use_jedi)
    findings = analyze(project, str(path), text)
    shown = hover_text(project, str(path), text, line, column,
                       findings=(lambda: analyze(project, str(path), text)) if with_findings else None)
    return shown, [(f.code, f.span.line) for f in findings]  # 0-based lines


def test_a_semaphore_in_a_triton_kernel_is_not_what_get_global_is_for(ws):
    """A REGULAR semaphore in a GPU pallas_call (Triton, which has no get_global): PAL003 on the call."""
    shown, findings = hover_on_get_global(ws, f"k = pl.pallas_call(body, out_shape={OUT})\n")
    assert findings == [("PAL003", 5)]
    assert shown == (HEAD + "a Mosaic GPU global semaphore, the type get_global takes\n\n"
                     "This call is reported: PAL003 get-global-no-lowering (error).")


def test_a_semaphore_in_an_interpreted_kernel_is_not_what_get_global_is_for(ws):
    shown, findings = hover_on_get_global(ws, f"k = plgpu.kernel(body, out_type={OUT}, interpret=True)\n")
    assert findings == [("PAL002", 5)]
    assert shown == (HEAD + "a Mosaic GPU global semaphore, the type get_global takes\n\n"
                     "This call is reported: PAL002 get-global-interpret (error).")


def test_a_semaphore_in_a_mosaic_gpu_kernel_with_a_grid_is_what_get_global_is_for(ws):
    shown, findings = hover_on_get_global(ws, f"k = plgpu.kernel(body, out_type={OUT}, grid=(2,), grid_names=('x',))\n")
    assert findings == []
    assert shown == HEAD + "a Mosaic GPU global semaphore: what get_global is for"


def test_without_the_findings_the_hover_makes_no_verdict_on_the_call(ws):
    shown, findings = hover_on_get_global(ws, f"k = pl.pallas_call(body, out_shape={OUT})\n", with_findings=False)
    assert findings == [("PAL003", 5)]
    assert shown == HEAD + "a Mosaic GPU global semaphore, the type get_global takes"
