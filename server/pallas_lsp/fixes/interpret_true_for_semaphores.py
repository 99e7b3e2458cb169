"""Fix (PAL016): the GPU interpreter chosen for a kernel with a scratch or scoped semaphore becomes `True`.

    RACE_CHECK = plgpu.InterpretGPUParams(detect_races=True)   ->   RACE_CHECK = True

`interpret=True` (Pallas's generic interpreter) runs scratch and `pl.run_scoped` semaphores, which the GPU
interpreter cannot allocate (`nan + semaphore`), and computes the same values: offered only where it runs the rest
of the kernel too, which it does not for a grid, cluster or warpgroups (no `lax.axis_index` names bound), a TMA
copy, a barrier or `commit_smem` (PAL025's list). The GPU interpreter's checks (race detection, NaN-filled memory)
are dropped with it, so the fix is unsafe. The parameters are rewritten where they are built, followed as PAL026's
fix follows them; a name shared by several calls of the same launcher (a test and a target) is rewritten once.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.values import Const
from ..rules.pal025_hlo_interpreter_mosaic_gpu import first_failure
from .kernel_edits import CannotFix, FixBuilder
from .tpu_params_to_gpu import constructors


def fix(project, model, finding):
    kernel, sites = finding.facts.get("kernel"), finding.facts.get("interpret") or []
    if kernel is None or not sites:
        return None
    if kernel.grid_axes is None or kernel.grid_axes or kernel.cluster_axes or kernel.thread_axes:
        raise CannotFix("interpret=True binds no grid, cluster or warpgroup axis (lax.axis_index would fail there)")
    failure = first_failure(project, kernel)
    if failure is not None:
        raise CannotFix(f"interpret=True has no rule for {failure[1]} (PAL025)")
    found = []
    for site in sites:
        node = site.node.value if isinstance(site.node, ast.keyword) else site.node
        if not isinstance(node, ast.expr):
            raise CannotFix("the GPU interpreter is chosen by a context manager or a global switch, not a value")
        found += constructors(project, site.model, node, "plgpu.InterpretGPUParams")
    if not found:
        raise CannotFix("where the plgpu.InterpretGPUParams(...) is built was not found")
    builder = FixBuilder(project)
    for where, call in dict.fromkeys(found):
        file, _ = builder.file(where)
        node, written = _switch(project, where, call)
        target = file.find_ast(where, node, cst.BaseExpression)
        if target is None:
            raise CannotFix("the plgpu.InterpretGPUParams call was not found")
        file.rewrite(target, lambda updated, written=written: cst.parse_expression(written))
    return builder.fix(f"pallas-lsp ({finding.code}): Interpret with interpret=True, which runs the semaphore "
                       "(without the GPU interpreter's checks)", "unsafe")


def _switch(project, model, call: ast.Call) -> tuple[ast.expr, str]:
    """What replaces the parameters: `True`; for `params if flag else False`, the flag itself (`bool(flag)` where
    it may be another value), not `True if flag else False`."""
    parent = model.parents.get(call)
    if isinstance(parent, ast.IfExp) and parent.body is call and isinstance(parent.orelse, ast.Constant) \
            and parent.orelse.value is False:
        test = model.source_segment(parent.test)
        value = project.evaluator.value(model, parent.test)
        boolean = isinstance(parent.test, (ast.Compare, ast.UnaryOp)) or \
            isinstance(value, Const) and isinstance(value.value, bool)
        return parent, test if boolean else f"bool({test})"
    return call, "True"
