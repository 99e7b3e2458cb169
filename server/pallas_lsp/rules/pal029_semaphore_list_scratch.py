"""PAL029 semaphore-list-scratch: a list of semaphore types as one scratch entry, indexed as a semaphore array.

`scratch_shapes=[..., [pltpu.SemaphoreType.DMA] * slots]` (a list or tuple of types, written or made by a helper)
gives the body a Python list of semaphore refs, not an array: `sems.at[slot]` fails as the body is traced, on every
backend and interpreter (jax 0.12, checked for a TPU copy's semaphore compiled and interpreted, and for Mosaic GPU
signal/wait): `AttributeError: 'list' object has no attribute 'at'` (`'tuple' ...` for a tuple). The array the
body asks for is one shaped semaphore, `pltpu.SemaphoreType.DMA((slots,))`. A list read with a constant index
(`sems[0]`) is a list of refs, which JAX takes: not reported. Reported at the first `.at` of the parameter.
"""

from __future__ import annotations

import ast
import sys

from ..analysis.evaluate import as_memtype
from ..analysis.kernel_args import kernel_parameters, launch_field
from ..analysis.kernel_model import SCRATCH_KEYWORDS
from ..analysis.returns import returns_in
from ..analysis.values import MemType, Seq

CODE = "PAL029"
NAME = "semaphore-list-scratch"
SEVERITY = "error"
SUMMARY = "A list of semaphore types as one scratch entry, indexed .at[i]: the body gets a list; use T((n,))."


def message(param: str, kind: str, count: int, container: str) -> str:
    return (f"JAX: \"AttributeError: '{container}' object has no attribute 'at'\"; ask for {kind}(({count},)). "
            f"The scratch entry of {param} is a {container} of {count} semaphore types, which JAX passes as a "
            f"{container} of refs; .at[i] indexes a semaphore array, one shaped semaphore type.")


def check(ctx):
    rule = sys.modules[__name__]
    if "emaphore" not in ctx.model.text or ".at[" not in ctx.model.text:
        return
    for kernel in ctx.kernels():
        entry = kernel.entry
        with ctx.isolated(rule, entry.node, entry.model):
            for param, kind, count, container, use in semaphore_lists(ctx.project, kernel):
                if use is None or entry.body.model is not ctx.model:
                    continue
                yield ctx.finding(rule, use, message(param.name, kind, count, container),
                                  (ctx.entry_related(kernel),),
                                  facts={"kernel": kernel, "param": param, "kind": kind, "count": count})


def semaphore_lists(project, kernel):
    """(body parameter, semaphore type's name, count, "list"/"tuple", first `.at` use or None) for each scratch entry
    of `kernel` that is a sequence of one semaphore type."""
    entry = kernel.entry
    scratch = SCRATCH_KEYWORDS.get(entry.api)
    if scratch is None or entry.body is None:
        return
    value = launch_field(project, entry, scratch.keyword)
    if not isinstance(value, Seq):
        return
    params = [p for p in kernel_parameters(project, entry) if p.role == "scratch"]
    if len(params) != len(value.items):
        return
    for index, (param, item) in enumerate(zip(params, value.items)):
        if not isinstance(item, Seq) or not item.items:
            continue
        types = [as_memtype(t) for t in item.items]
        if not all(isinstance(t, MemType) and t.shape == () and t.dtype in ("dma_sem", "semaphore", "barrier_semaphore")
                   for t in types) or len({(t.constructor, t.dtype) for t in types}) != 1:
            continue
        uses = at_uses(entry.body.model, entry.body.node, param.name)
        written = written_entry(project, entry, scratch.keyword, index)
        container = "tuple" if written is not None and _tuple_display(written[1]) else "list"
        yield param, types[0].constructor, len(types), container, uses[0] if uses else None


def written_entry(project, entry, keyword: str, index: int) -> tuple | None:
    """(model, expression) where the scratch list's `index`-th entry is written: in the launch's list, or in the
    list a helper or method returns (its one `return`), or a name's assignment."""
    found = entry.kernel.kwarg(keyword)
    if not found or found[1] is None:
        return None
    model, expr = entry.model, found[1]
    for _ in range(4):
        if isinstance(expr, (ast.List, ast.Tuple)):
            if any(isinstance(e, ast.Starred) for e in expr.elts) or index >= len(expr.elts):
                return None
            return _through_names(model, expr.elts[index])
        if isinstance(expr, ast.Name):
            binding = model.lookup(expr.id, model.scope_of(expr), expr.lineno)
            if binding is None or binding.kind != "assign" or binding.value is None:
                return None
            expr = binding.value
            continue
        if isinstance(expr, ast.Call):
            callee = project.evaluator.value(model, expr.func)
            node = getattr(callee, "node", None)
            returns = [r for r in returns_in(node.body) if r.value is not None] \
                if isinstance(node, ast.FunctionDef) else []
            if len(returns) != 1:
                return None
            model, expr = callee.model, returns[0].value
            continue
        return None
    return None


def _through_names(model, expr: ast.expr) -> tuple:
    """(model, expression, names on the way): a name's one assignment followed (`PHASES = (T, T)`)."""
    names = []
    while isinstance(expr, ast.Name) and len(names) < 4:
        binding = model.lookup(expr.id, model.scope_of(expr), expr.lineno)
        if binding is None or binding.kind != "assign" or binding.value is None:
            break
        names.append(expr.id)
        expr = binding.value
    return model, expr, tuple(names)


def _tuple_display(expr: ast.expr) -> bool:
    if isinstance(expr, ast.BinOp):
        return isinstance(expr.left, ast.Tuple) or isinstance(expr.right, ast.Tuple)
    return isinstance(expr, ast.Tuple)


def at_uses(model, function: ast.AST, name: str) -> list[ast.Attribute]:
    """The `name.at` attributes in `function` (nested functions that do not bind `name` too), in source order."""
    found = []
    for node in ast.walk(function):
        if isinstance(node, ast.Attribute) and node.attr == "at" and isinstance(node.value, ast.Name) \
                and node.value.id == name and _binds(model, node.value, function):
            found.append(node)
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def other_uses(model, function: ast.AST, name: str) -> list[ast.Name]:
    """Loads of `name` in `function` that are not `name.at[...]`."""
    found = []
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load) \
                and _binds(model, node, function):
            parent = model.parents.get(node)
            if not (isinstance(parent, ast.Attribute) and parent.attr == "at"
                    and isinstance(model.parents.get(parent), ast.Subscript)):
                found.append(node)
    return found


def _binds(model, name: ast.Name, function: ast.AST) -> bool:
    """Whether `name` there is the parameter of `function` (not a name a nested function binds itself)."""
    binding = model.lookup(name.id, model.scope_of(name), name.lineno)
    return binding is not None and binding.kind == "param" and model.parents.get(model.parents.get(binding.node)) is function
