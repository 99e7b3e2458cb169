"""Fix (PAL013): a TPU DMA semaphore that is only signalled and waited on is allocated REGULAR.

    scratch_shapes=[pltpu.SemaphoreType.DMA((2,))]   ->   scratch_shapes=[pltpu.SemaphoreType.REGULAR((2,))]

A DMA semaphore is what a copy signals; `pl.semaphore_signal` / `pl.semaphore_wait` take a REGULAR one
(jax 0.12: "Must signal semaphores of the following types"). Where the kernel starts no copy at all, the
semaphore takes part in no DMA, and the counting its signals and waits do is what a REGULAR semaphore of the
same shape does: that is the only meaning the code can have. Only for a scratch or `pl.run_scoped`
semaphore whose type is written in this module, at the allocation or in a module constant used there alone.
"""

from __future__ import annotations

import ast
import re

import libcst as cst

from .kernel_edits import CannotFix, FixBuilder


def _dma_attribute(expr: ast.expr) -> ast.Attribute | None:
    """`X.SemaphoreType.DMA` in `expr` (`pltpu.SemaphoreType.DMA` or `...DMA((2,))`)."""
    node = expr.func if isinstance(expr, ast.Call) else expr
    if (isinstance(node, ast.Attribute) and node.attr == "DMA" and isinstance(node.value, ast.Attribute)
            and node.value.attr == "SemaphoreType"):
        return node
    return None


def _type_expression(project, kernel, sem) -> ast.expr | None:
    """Where the semaphore's type is written: its scratch list's element, or its run_scoped argument."""
    match = re.fullmatch(r"(scratch_shapes|scratch_types)\[(\d+)\]", sem.origin)
    if match:
        call = kernel.entry.node
        if not isinstance(call, ast.Call) or kernel.entry.model is not sem.model:
            return None
        for keyword in call.keywords:
            if keyword.arg == match[1] and isinstance(keyword.value, (ast.List, ast.Tuple)):
                elts = keyword.value.elts
                index = int(match[2])
                return elts[index] if index < len(elts) and not any(isinstance(e, ast.Starred) for e in elts) else None
        return None
    if sem.origin != "pl.run_scoped":
        return None
    for call in ast.walk(sem.model.tree):
        if not (isinstance(call, ast.Call) and call.args and ast.unparse(call.func).endswith("run_scoped")):
            continue
        body = project.evaluator.value(sem.model, call.args[0])
        node = getattr(body, "node", None)
        if isinstance(node, ast.FunctionDef):
            params = [*node.args.posonlyargs, *node.args.args]
            if sem.node in params and params.index(sem.node) + 1 < len(call.args):
                return call.args[params.index(sem.node) + 1]
    return None


def _written_here(model, expr: ast.expr) -> ast.Attribute | None:
    """The DMA attribute of `expr`, or of the module constant it names when that name is read only here."""
    found = _dma_attribute(expr)
    if found is not None or not isinstance(expr, ast.Name):
        return found
    binding = model.lookup(expr.id, model.scope_of(expr), expr.lineno)
    node = getattr(binding, "node", None)
    if binding is None or binding.kind != "assign" or not isinstance(node, ast.Assign) or node not in model.tree.body:
        return None
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
        return None
    reads = [n for n in ast.walk(model.tree) if isinstance(n, ast.Name) and n.id == expr.id and isinstance(n.ctx, ast.Load)]
    return _dma_attribute(node.value) if reads == [expr] else None


def fix(project, model, finding):
    facts = finding.facts
    kernel, node = facts.get("kernel"), facts.get("semaphore")
    if kernel is None or node is None or facts.get("dtype") != "dma_sem":
        return None
    sem = next((s for s in kernel.semaphores if s.node is node), None)
    if sem is None:
        return None
    if kernel.dma_copies:
        raise CannotFix("the kernel makes DMA copies: which semaphore a copy signals is not checked here")
    if any(use.kind not in ("signal", "wait", "read") for use in sem.uses):
        raise CannotFix("the DMA semaphore is used for more than signal and wait")
    expr = _type_expression(project, kernel, sem)
    target = _written_here(sem.model, expr) if expr is not None else None
    if target is None:
        raise CannotFix("the DMA semaphore's type is not written where it is allocated, in this module")
    builder = FixBuilder(project)
    file, _ = builder.file(sem.model)
    found = file.find_ast(sem.model, target, cst.Attribute)
    if found is None:
        raise CannotFix("the semaphore's type was not found")
    file.rewrite(found, lambda updated: updated.with_changes(attr=cst.Name("REGULAR")))
    return builder.fix(f"pallas-lsp ({finding.code}): Allocate a REGULAR semaphore (only signalled and waited on)",
                       "safe", preferred=True)
