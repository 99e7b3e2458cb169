"""A list grown before its use: `in_specs = [a, b]`, then `in_specs.append(c)`, or an `if` the call's frame
settles (`if return_residuals: out_shape.append(...)`). The list at the use is the display plus what every
statement between them surely adds; unknown where one may or may not run (a loop, an `if` not settled)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from . import reads
from .comparisons import branch_verdict, settled, truth
from .model import walk_nodes
from .reaching import mutates
from .values import UNKNOWN, Seq, Value

if TYPE_CHECKING:
    from .model import Binding, ModuleModel

_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.comprehension)


def grown_list(evaluator, model: "ModuleModel", binding: "Binding", use: ast.AST, scope: ast.AST, frame) -> Value | None:
    """The list `binding` makes as the use sees it; None where the binding is no list display changed in place
    (the evaluator's own answer stands), UNKNOWN where what is added before the use is not known."""
    if binding.kind != "assign" or not isinstance(binding.value, ast.List):
        return None
    targets = binding.node.targets if isinstance(binding.node, ast.Assign) else [getattr(binding.node, "target", None)]
    if len(targets) != 1 or not isinstance(targets[0], ast.Name):
        return None
    name = targets[0].id
    owner = model.scope_of(binding.node)
    if owner is not scope or not mutates(model, owner, {name}) or len(model.scopes[owner].bindings.get(name, ())) != 1:
        return None  # most lists: never changed in place (the scope's changed names are kept, `mutated_names`)
    inner = frame if frame is not None and frame.func is owner else None
    changes = _kept_changes(model, owner, name)  # walked for the few lists changed in place only
    if changes is None:
        return UNKNOWN
    if not changes:
        return None
    value = evaluator.value(model, binding.value, inner)
    if not isinstance(value, Seq):
        return UNKNOWN
    items = list(value.items)
    for statement, method, argument in changes:
        if statement.lineno <= binding.lineno or statement.lineno >= use.lineno:
            continue  # before the list is made, or after the use
        verdict = branch_verdict(model, statement, use, owner, settled(evaluator, model, inner) if inner is not None
                                 else lambda test: truth(evaluator.value(model, test)))
        if verdict == "never":
            continue
        if verdict != "always":
            return UNKNOWN
        added = evaluator.value(model, argument, inner)
        if method == "append":
            items.append(added)
        elif isinstance(added, Seq):
            items.extend(added.items)
        else:
            return UNKNOWN
    return Seq(tuple(items))


def _kept_changes(model: "ModuleModel", owner: ast.AST, name: str):
    """`_changes`, kept with the module text until an edit anywhere under `owner` (`model_patch`: "deep"):
    a launcher's `in_specs` is asked for by every keystroke's kernel model, and its walk is of the whole
    launcher."""
    key = ("list-changes", id(owner), name)
    found = model.eval_cache.get(key, _MISSING)
    if found is _MISSING:
        found = reads.kept(model.eval_cache, key, lambda: _changes(model, owner, name), model.read_key,
                           ("deep", id(owner)))
    return found


_MISSING = object()


def _changes(model: "ModuleModel", owner: ast.AST, name: str):
    """(statement, "append" | "extend", argument) for each in-place change of `name` in `owner`, in order;
    None where one is of another kind, in a nested function or in a loop."""
    found = []
    for node in walk_nodes(owner):  # no generators: asked of every function a list is built in
        target = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                and node.func.value.id == name:
            target = node
        elif isinstance(node, (ast.Subscript, ast.AugAssign)) and isinstance(getattr(node, "value", None), ast.Name) \
                and node.value.id == name and isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load):
            return None
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            if not isinstance(node.op, ast.Add) or model.scope_of(node) is not owner or _in_loop(model, node, owner):
                return None
            found.append((node, "extend", node.value))
            continue
        if target is None:
            continue
        statement = model.parents.get(target)
        if target.func.attr not in ("append", "extend") or len(target.args) != 1 or target.keywords \
                or not isinstance(statement, ast.Expr) or model.scope_of(target) is not owner \
                or _in_loop(model, statement, owner):
            if target.func.attr in ("append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse"):
                return None
            continue
        found.append((statement, target.func.attr, target.args[0]))
    return sorted(found, key=lambda change: (change[0].lineno, change[0].col_offset))


def _in_loop(model: "ModuleModel", node: ast.AST, owner: ast.AST) -> bool:
    while node is not None and node is not owner:
        if isinstance(node, _LOOPS):
            return True
        node = model.parents.get(node)
    return False
