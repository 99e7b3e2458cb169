"""Which bindings of a name may reach a use of it: the flow the evaluator follows through branches and loops."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .model import Binding, ModuleModel

_BRANCHING = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.ExceptHandler, ast.Match, ast.match_case)
_BRANCHES = ("body", "orelse", "finalbody", "handlers", "cases")


def reaching_bindings(model: "ModuleModel", binding: "Binding", use: ast.AST, scope: ast.AST) -> list["Binding"]:
    """The bindings of the use's scope that may reach it: the latest one before it and, while that one
    sits in a branch or loop the use is not inside of, the ones before it too."""
    bindings = model.scopes[scope].bindings.get(use.id, ()) if scope in model.scopes else ()
    if len(bindings) < 2 or binding not in bindings or binding.kind not in ("assign", "unpack"):
        return [binding]
    use_ancestors = set()
    node = use
    while node is not None and node is not scope:
        use_ancestors.add(id(node))
        node = model.parents.get(node)
    reaching = []
    for candidate in reversed([b for b in bindings if b.lineno <= binding.lineno]):
        reaching.append(candidate)
        if candidate.kind not in ("assign", "unpack") or _dominates(model, candidate.node, use_ancestors, scope):
            return reaching
    return reaching


def _dominates(model: "ModuleModel", statement: ast.AST, use_ancestors: set[int], scope: ast.AST) -> bool:
    """Every branch or loop body holding `statement` also holds the use (approximately: the same list)."""
    node = statement
    while node is not None and node is not scope:
        parent = model.parents.get(node)
        if isinstance(parent, _BRANCHING):
            same = next((getattr(parent, f) for f in _BRANCHES if node in getattr(parent, f, ())), None)
            if same is None or not any(id(s) in use_ancestors for s in same):
                return False
        node = parent
    return True
