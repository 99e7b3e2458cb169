"""Fix (PAL008): a value read out of a `plgpu.alloc_semaphore` ref, passed to a `plgpu.kernel`,
becomes the ref.

`sems[...]` and `jax.freeze(sems)` read every semaphore: `sems` passes the same ones as a ref, the
only way `plgpu.kernel` takes them. Only where the read is the operand itself or a name bound to it
once and used only there. Not for `sems[i]` or `sems.at[i][...]`: the ref of one, `sems.at[i]`, is
not an operand JAX takes (`TransformedRefs cannot be abstractified`, jax 0.12); the body would have
to index the whole ref.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis.values import Api, SemaphoreArray, SemaphoreRef
from .kernel_edits import CannotFix, FixBuilder, replace_expression


def _read(project, model, operand: ast.expr) -> ast.expr | None:
    """The expression that reads the ref: the operand, or the value of the name it is."""
    if not isinstance(operand, ast.Name):
        return operand
    binding = model.lookup(operand.id, model.scope_of(operand), operand.lineno)
    if binding is None or binding.kind != "assign" or not isinstance(binding.node, ast.Assign):
        return None
    scope = model.enclosing_function(operand) or model.tree
    loads = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == operand.id]
    if len(loads) != 2:  # bound once, read once (here)
        return None
    return binding.value


def _whole_ref(project, model, node: ast.expr) -> bool:
    """A ref to every semaphore made, not a view (`sems.at[i]`: a TransformedRef, no operand JAX takes)."""
    return isinstance(project.evaluator.value(model, node), SemaphoreRef) and not any(
        isinstance(n, ast.Attribute) and n.attr == "at" for n in ast.walk(node))


def _as_ref(project, model, read: ast.expr) -> str | None:
    """The code for the ref `read` reads."""
    text = lambda node: ast.get_source_segment(model.text, node)  # noqa: E731
    if isinstance(read, ast.Subscript) and _whole_ref(project, model, read.value):
        if isinstance(read.slice, ast.Constant) and read.slice.value is Ellipsis:
            return text(read.value)
        return None  # `sems[i]`: `sems.at[i]` is not an operand JAX takes (a TransformedRef; jax 0.12)
    if isinstance(read, ast.Call) and len(read.args) == 1 and not read.keywords:
        callee = project.evaluator.value(model, read.func)
        if isinstance(callee, Api) and callee.name == "jax.freeze" and _whole_ref(project, model, read.args[0]):
            return text(read.args[0])
    return None


def fix(project, model, finding):
    operand, value = finding.facts.get("operand"), finding.facts.get("value")
    if operand is None or not isinstance(value, SemaphoreArray) or operand not in model.parents:
        return None
    read = _read(project, model, operand)
    code = _as_ref(project, model, read) if read is not None else None
    if code is None:
        raise CannotFix("where the ref is read is not known here")
    builder = FixBuilder(project)
    replace_expression(builder, model, read, code)
    return builder.fix(f"pallas-lsp ({finding.code}): Pass the semaphore ref: {code}", "safe", preferred=True)
