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


def declared_instead(model: "ModuleModel", name: str, binding: "Binding") -> list["Binding"]:
    """Where `binding` is in the branch of an `if TYPE_CHECKING:` that runs, the bindings of `name` its other branch
    declares (`if TYPE_CHECKING: plgpu = _plgpu` / `else: plgpu = types.ModuleType(...)` and
    `plgpu.__dict__.update(_plgpu.__dict__)`, as JAX's own Mosaic GPU tests write it); empty otherwise. The evaluator
    takes the declaration only where what runs is unknown to it."""
    from .workspace_imports import _type_checking_test

    node, statement = binding.node, None
    while node is not None:
        parent = model.parents.get(node)
        if isinstance(parent, ast.If) and _type_checking_test(parent) is not None:
            statement = parent
            break
        node = parent
    if statement is None or (node in statement.body) == _type_checking_test(statement):
        return []  # not in an `if TYPE_CHECKING:`, or in its declaring branch
    declaring = statement.body if _type_checking_test(statement) else statement.orelse
    scope = model.scopes.get(model.scope_of(binding.node))
    inside = {id(n) for part in declaring for n in ast.walk(part)}
    return [b for b in (scope.bindings.get(name, ()) if scope else ()) if id(b.node) in inside]


# Methods that change a list, dict or set in place.
_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "sort",
                       "reverse", "popitem", "add", "discard", "__setitem__", "__delitem__"})


def mutated_names(model: "ModuleModel", scope: ast.AST) -> frozenset[str]:
    """Names changed in place somewhere in `scope` (nested functions too, which may close over them):
    `specs.append(...)`, `specs[i] = ...`, `del specs[i]`. A list bound to such a name is not the literal it
    was made from (`specs = []` and then a loop of appends is no empty list). Kept with the module text."""
    key = ("mutated-names", id(scope))
    found = model.eval_cache.get(key)
    if found is None:
        names = set()
        for node in ast.walk(scope):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS \
                    and isinstance(node.func.value, ast.Name):
                names.add(node.func.value.id)
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                    and isinstance(node.value, ast.Name):
                names.add(node.value.id)
        found = model.eval_cache[key] = frozenset(names)
    return found


def popped_keys(model: "ModuleModel", scope: ast.AST, name: str) -> frozenset[str] | None:
    """The keys `name.pop("key", ...)` takes out of the dict `name` in `scope`, where that is all that
    changes it (a wrapper's `kwargs.pop("compiler_params", default)` before it hands `**kwargs` on); None
    where it is changed in another way too."""
    if name not in mutated_names(model, scope):
        return frozenset()
    key = ("popped-keys", id(scope), name)
    if key not in model.eval_cache:
        model.eval_cache[key] = _popped_keys(scope, name)
    return model.eval_cache[key]


def _popped_keys(scope: ast.AST, name: str) -> frozenset[str] | None:
    keys = set()
    for node in ast.walk(scope):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                and isinstance(node.value, ast.Name) and node.value.id == name:
            return None
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name):
            continue
        if node.func.attr not in _MUTATORS:
            continue
        if node.func.attr != "pop" or not node.args or not isinstance(node.args[0], ast.Constant) \
                or not isinstance(node.args[0].value, str):
            return None
        keys.add(node.args[0].value)
    return frozenset(keys)
