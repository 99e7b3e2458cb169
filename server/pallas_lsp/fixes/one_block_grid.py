"""Fix (PAL004): a gridless Mosaic GPU kernel with several `get_global`s gets a one-block grid
(`plgpu.kernel(..., grid=(1,), grid_names=("block",))`, or the same in a `pl.kernel`'s `plgpu.Mesh(...)`).

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


def _launch_settings(project, entry) -> ast.Call | None:
    """The call whose keywords say the grid: `plgpu.kernel(...)` itself, or the `plgpu.Mesh(...)`
    written as a `pl.kernel`'s `mesh=`."""
    from ..analysis.values import Api

    if entry.api == "plgpu.kernel":
        return entry.node
    found = entry.kernel.kwarg("mesh") if entry.api == "pl.kernel" else None
    mesh = found[1] if found is not None else None
    if not isinstance(mesh, ast.Call) or mesh.args or mesh not in entry.model.parents:
        return None
    callee = project.evaluator.value(entry.model, mesh.func)
    return mesh if isinstance(callee, Api) and callee.name == "plgpu.Mesh" else None


def fix(project, model, finding):
    entry = finding.facts.get("entry")
    if entry is None or not isinstance(entry.node, ast.Call):
        return None
    builder = FixBuilder(project)
    if not launch_on_one_block(project, entry, builder):
        return None
    moved = _hoist_repeated(project, model, finding, builder)
    return builder.fix(f"pallas-lsp ({finding.code}): Launch the kernel on a one-block grid (grid=(1,)){moved}",
                       "safe", preferred=True)


def launch_on_one_block(project, entry, builder) -> bool:
    """Add `grid=(1,), grid_names=("block",)` to a gridless Mosaic GPU launch through `builder`; False where
    the launch is not one (or already has grid or cluster axes)."""
    settings = _launch_settings(project, entry)
    if settings is None:
        return False
    if any(k.arg in ("grid", "grid_names", "cluster", "cluster_names") for k in settings.keywords):
        return False
    if any(k.arg is None for k in settings.keywords):
        raise CannotFix("the launch passes **kwargs")
    file, _ = builder.file(entry.model)
    launch = file.find_ast(entry.model, settings, cst.Call)
    if launch is None:
        raise CannotFix("the kernel launch was not found")

    def keyword(name: str, code: str) -> cst.Arg:
        return cst.Arg(expression(code), keyword=cst.Name(name),
                       equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                             whitespace_after=cst.SimpleWhitespace("")))

    file.rewrite(launch, lambda updated: updated.with_changes(args=appended(
        appended(list(updated.args), keyword("grid", "(1,)")), keyword("grid_names", '("block",)'))))
    return True


def _hoist_repeated(project, model, finding, builder) -> str:
    """With a grid every get_global has its slot, but one in a branch Mosaic GPU lowers twice still takes
    two: each such get_global moves out of its branch too (hoist_out_of_cond), where all of them can.
    Returns the title's note."""
    from .hoist_out_of_cond import _repeated_get_globals, hoist

    calls = _repeated_get_globals(finding)
    if not calls or any(call not in model.parents for call in calls):
        return ""
    trial = FixBuilder(project)
    try:
        if any(hoist(project, model, trial, call) is None for call in calls):
            return ""
    except CannotFix:
        return ""
    moves = [hoist(project, model, builder, call) for call in calls]
    return "".join(f", and ask for {name} before the {kind}, not in {branch}" for name, kind, branch in moves)
