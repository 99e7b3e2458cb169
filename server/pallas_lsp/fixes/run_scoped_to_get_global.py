"""Fix (PAL007): a semaphore `pl.run_scoped` cannot share across blocks becomes a global one.

`pl.run_scoped(f, T, collective_axes=...)` calls `f` with a scoped `T` and returns what `f`
returns; `f(pl.get_global(T))` does the same with a semaphore shared by the whole grid or cluster,
which is what the collective axes asked for (checked with jax 0.12: the fixed kernel lowers).
"""

from __future__ import annotations

import ast

import libcst as cst

from .kernel_edits import CannotFix, FixBuilder

_SEMAPHORES = ("SemaphoreType.REGULAR",)


def _run_scoped_at(model, span) -> ast.Call | None:
    for node in ast.walk(model.tree):
        if isinstance(node, ast.Call) and model.source.span(node) == span:
            return node
    return None


def fix(project, model, finding):
    call = finding.facts.get("run_scoped") if finding.facts.get("model") is model else None
    call = call or _run_scoped_at(model, finding.span)
    if call is None or len(call.args) != 2 or any(k.arg != "collective_axes" for k in call.keywords):
        return None
    function, kind = call.args
    if isinstance(function, ast.Starred) or isinstance(kind, ast.Starred):
        return None
    kind_code = ast.get_source_segment(model.text, kind) or ""
    if not kind_code.endswith(_SEMAPHORES):
        raise CannotFix("only a REGULAR semaphore can be global")
    builder = FixBuilder(project)
    file, imports = builder.file(model)
    target = file.find_ast(model, call, cst.Call)
    if target is None or len(target.args) != 3:
        raise CannotFix("the run_scoped call was not found")
    pl = imports.name("jax.experimental.pallas")

    def rewrite(updated: cst.Call) -> cst.Call:
        scoped, allocation = updated.args[0].value, updated.args[1].value
        get_global = cst.Call(func=cst.parse_expression(f"{pl}.get_global"), args=[cst.Arg(allocation)])
        return cst.Call(func=scoped, args=[cst.Arg(get_global)], lpar=updated.lpar, rpar=updated.rpar)

    file.rewrite(target, rewrite)
    return builder.fix(f"pallas-lsp ({finding.code}): Use a global semaphore (pl.get_global)", "safe", preferred=True)
