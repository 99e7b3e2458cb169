"""Fix (PAL015): a TPU semaphore that only copies use is allocated DMA, not REGULAR.

    scratch_shapes = (..., pltpu.SemaphoreType.REGULAR((2,)))   ->   (..., pltpu.SemaphoreType.DMA((2,)))

A copy's descriptor `.wait()` binds `dma_wait`, which takes a DMA semaphore only (jax 0.12: "dma_wait requires a
DMA semaphore, but got a regular semaphore"). Where a semaphore is given to copies and to nothing else (no
`pl.semaphore_signal`, `pl.semaphore_wait` or `pl.semaphore_read` of its own), the counting the copies do on it is
what a DMA semaphore of the same shape does: that is the only meaning the code can have, so the fix is safe. Only
for a scratch semaphore whose type is written in the launch's scratch list: at the launch, in its grid spec, or in
the variable passed there (each branch's list where it is assigned in several: the branches that wrote REGULAR), or
the list a config's method or a helper returns (`scratch_shapes=cfg.scratch_shapes()`);
or for a `pl.run_scoped` semaphore whose type is written in the `pl.run_scoped(...)` call.
"""

from __future__ import annotations

import ast
import re

import libcst as cst

from ..rules.pal015_dma_wait_semaphore_type import COPY_USES
from .grid_spec import grid_spec_call, scratch_argument
from .kernel_edits import CannotFix, FixBuilder
from .regular_semaphore import _type_expression



def _regular_attribute(expr: ast.expr) -> ast.Attribute | None:
    """`X.SemaphoreType.REGULAR` in `expr` (`pltpu.SemaphoreType.REGULAR` or `...REGULAR((2,))`)."""
    node = expr.func if isinstance(expr, ast.Call) else expr
    if (isinstance(node, ast.Attribute) and node.attr == "REGULAR" and isinstance(node.value, ast.Attribute)
            and node.value.attr == "SemaphoreType"):
        return node
    return None


def written_sequences(project, model, node: ast.AST | None) -> list[tuple[object, ast.AST]]:
    """The (module, list or tuple display) pairs `node` is: itself, each one a name is assigned in its function, or
    each one returned by the function or method it calls (`scratch_shapes=cfg.scratch_shapes()`)."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return [(model, node)]
    if isinstance(node, ast.Call):
        return _returned_sequences(project, model, node)
    if not isinstance(node, ast.Name):
        return []
    scope = model.enclosing_function(node) or model.tree
    assigns = [n for n in ast.walk(scope) if isinstance(n, ast.Assign) and len(n.targets) == 1
               and isinstance(n.targets[0], ast.Name) and n.targets[0].id == node.id]
    stores = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == node.id and not isinstance(n.ctx, ast.Load)]
    if len(stores) != len(assigns) or not all(isinstance(a.value, (ast.List, ast.Tuple)) for a in assigns):
        return []  # bound otherwise too (`+=`, a loop): which list the launch gets is not only these
    return [(model, a.value) for a in assigns]


def _returned_sequences(project, model, call: ast.Call) -> list[tuple[object, ast.AST]]:
    """The list or tuple displays a plain function or method returns, each `return` one (none where any return
    is something else, or the function also yields)."""
    from ..analysis.values import Func

    function = project.evaluator.value(model, call.func)
    if not (isinstance(function, Func) and isinstance(function.node, ast.FunctionDef)):
        return []
    own = [n for n in ast.walk(function.node) if function.model.enclosing_function(n) is function.node]
    returns = [n for n in own if isinstance(n, ast.Return)]
    if not returns or any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own) \
            or not all(isinstance(r.value, (ast.List, ast.Tuple)) for r in returns):
        return []
    return [(function.model, r.value) for r in returns]


def _regular_types(project, kernel, sem) -> list[tuple[object, ast.Attribute]]:
    """The `SemaphoreType.REGULAR` attributes that allocate the scratch semaphore `sem`, with their modules."""
    match = re.fullmatch(r"(scratch_shapes|scratch_types)\[(\d+)\]", sem.origin)
    entry = kernel.entry
    if match is None or not isinstance(entry.node, ast.Call):
        return []
    found = entry.kernel.kwarg(match[1])
    written = found[1] if found else None
    if written is None and match[1] == "scratch_shapes":
        spec = grid_spec_call(project, entry)
        written = scratch_argument(project, entry.model, spec) if spec is not None else None
    index = int(match[2])
    attributes = []
    for where, sequence in written_sequences(project, entry.model, written):
        elts = sequence.elts
        if index >= len(elts) or any(isinstance(e, ast.Starred) for e in elts):
            return []
        attribute = _regular_attribute(elts[index])
        if attribute is not None:
            attributes.append((where, attribute))
    return attributes


def fix(project, model, finding):
    facts = finding.facts
    kernel, node = facts.get("kernel"), facts.get("semaphore")
    if kernel is None or node is None or facts.get("dtype") != "semaphore":
        return None
    sem = next((s for s in kernel.semaphores if s.node is node), None)
    if sem is None:
        return None
    if any(use.kind not in COPY_USES for use in sem.uses):
        raise CannotFix("the semaphore is also signalled, waited on or read as a REGULAR semaphore")
    if sem.origin == "pl.run_scoped":  # `pl.run_scoped(fetch, ..., pltpu.SemaphoreType.REGULAR)`
        written = _type_expression(project, kernel, sem)
        attributes = [(sem.model, a) for a in [_regular_attribute(written) if written is not None else None] if a]
    else:
        attributes = _regular_types(project, kernel, sem)
    if not attributes:
        raise CannotFix("the semaphore's type is not written in the launch's scratch list or its pl.run_scoped")
    builder = FixBuilder(project)
    for where, attribute in attributes:
        file, _ = builder.file(where)
        found = file.find_ast(where, attribute, cst.Attribute)
        if found is None:
            raise CannotFix("the semaphore's type was not found")
        file.rewrite(found, lambda updated: updated.with_changes(attr=cst.Name("DMA")))
    return builder.fix(f"pallas-lsp ({finding.code}): Allocate a DMA semaphore (only copies use it)", "safe",
                       preferred=True)
