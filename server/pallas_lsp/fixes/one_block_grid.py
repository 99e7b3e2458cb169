"""Fix (PAL004): a gridless Mosaic GPU kernel with several `get_global`s gets a one-block grid.

Without grid and cluster axes JAX's estimator makes room for one semaphore while lowering adds them
all up (a JAX bug, 0.11.2 and 0.12); with `grid=(1,)` every `get_global` gets its own slot. One
block before, one block after, and the new axis name is used nowhere: the kernel means the same
(checked with jax 0.12: the fixed kernel lowers).
"""

from __future__ import annotations

import ast

import libcst as cst

from .cst_locate import expression
from .kernel_edits import CannotFix, FixBuilder, appended


def fix(project, model, finding):
    entry = finding.facts.get("entry")
    if entry is None or entry.api != "plgpu.kernel" or not isinstance(entry.node, ast.Call):
        return None
    if any(entry.kernel.kwarg(name) is not None for name in ("grid", "grid_names", "cluster", "cluster_names")):
        return None
    if any(k.arg is None for k in entry.node.keywords):
        raise CannotFix("the launch passes **kwargs")
    builder = FixBuilder(project)
    file, _ = builder.file(entry.model)
    launch = file.find_ast(entry.model, entry.node, cst.Call)
    if launch is None:
        raise CannotFix("the kernel launch was not found")

    def keyword(name: str, code: str) -> cst.Arg:
        return cst.Arg(expression(code), keyword=cst.Name(name),
                       equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                             whitespace_after=cst.SimpleWhitespace("")))

    file.rewrite(launch, lambda updated: updated.with_changes(args=appended(
        appended(list(updated.args), keyword("grid", "(1,)")), keyword("grid_names", '("block",)'))))
    return builder.fix(f"pallas-lsp ({finding.code}): Launch the kernel on a one-block grid (grid=(1,))",
                       "safe", preferred=True)
