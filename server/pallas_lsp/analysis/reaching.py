"""Which bindings of a name may reach a use of it: the flow the evaluator follows through branches and loops."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from . import reads
from .model import walk_nodes

if TYPE_CHECKING:
    from .model import Binding, ModuleModel

_BRANCHING = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.ExceptHandler, ast.Match, ast.match_case)
_BRANCHES = ("body", "orelse", "finalbody", "handlers", "cases")


def outside_own_statement(model: "ModuleModel", binding: "Binding", use: ast.AST, scope: ast.AST) -> "Binding | None":
    """The binding a use in the right-hand side of its own assignment sees (`s = jnp.expand_dims(s, 1)`:
    the `s` bound before that statement, a parameter here); `binding` for any other use; None where
    nothing before binds it."""
    if binding.kind not in ("assign", "unpack") or binding.value is None:
        return binding
    node = use
    while node is not None and node is not binding.node:
        node = model.parents.get(node)
    if node is None:
        return binding
    bindings = model.scopes[scope].bindings.get(use.id, ()) if scope in model.scopes else ()
    index = next((i for i, b in enumerate(bindings) if b is binding), None)
    # the latest before it that can run before it: not one in the other arm of an `if` (`if c: s = (*s, l)`
    # `else: s = (*s, None)`: the second `s` is the one bound before that `if`)
    return next((b for b in reversed(bindings[:index or 0]) if not _other_arm(model, b.node, binding.node)), None)


def _other_arm(model: "ModuleModel", node: ast.AST, other: ast.AST) -> bool:
    """Whether `node` and `other` sit in different arms of one `if` (never both run)."""
    path, child = {}, other
    while child is not None:
        parent = model.parents.get(child)
        if isinstance(parent, ast.If):
            path[id(parent)] = child in parent.body
        child = parent
    child = node
    while child is not None:
        parent = model.parents.get(child)
        if isinstance(parent, ast.If) and id(parent) in path:
            return path[id(parent)] != (child in parent.body)
        child = parent
    return False


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

    if getattr(model, "source", None) is not None and not model.mentions("TYPE_CHECKING"):
        return []  # asked of every binding whose value is unknown: most modules have no such `if`
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
    inside = {id(n) for part in declaring for n in walk_nodes(part)}
    return [b for b in (scope.bindings.get(name, ()) if scope else ()) if id(b.node) in inside]


# Methods that change a list, dict or set in place.
_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "sort",
                       "reverse", "popitem", "add", "discard", "__setitem__", "__delitem__"})


def mutated_names(model: "ModuleModel", scope: ast.AST) -> frozenset[str]:
    """Names changed in place somewhere in `scope` (nested functions too, which may close over them):
    `specs.append(...)`, `specs[i] = ...`, `del specs[i]`. A list bound to such a name is not the literal it
    was made from (`specs = []` and then a loop of appends is no empty list). Kept with the module text until
    an edit changes what some statement changes in place (`model_patch`); an answer that uses it says which
    names it asked about (`mutates`), so that an edit of the scope's other statements keeps that answer."""
    key = ("mutated-names", id(scope))
    found = dict.get(model.eval_cache, key)
    if found is None:
        found = frozenset(changed_in_place(walk_nodes(scope)))
        model.eval_cache.keep(key, found, reads.standalone(("mutates", id(model), "*")))
    return found


def changed_in_place(nodes) -> set[str]:
    """The names `nodes` change in place (`x.append(...)`, `x[i] = ...`, `del x[i]`)."""
    names = set()
    for node in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS \
                and isinstance(node.func.value, ast.Name):
            names.add(node.func.value.id)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                and isinstance(node.value, ast.Name):
            names.add(node.value.id)
    return names


def mutates(model: "ModuleModel", scope: ast.AST, names: set[str]) -> bool:
    """Is one of `names` changed in place in `scope` (`mutated_names`)? The answer in progress reads those names'
    changes only."""
    for name in names:
        reads.note(("mutates", id(model), name))
    return not names.isdisjoint(mutated_names(model, scope))


def popped_keys(model: "ModuleModel", scope: ast.AST, name: str) -> frozenset[str] | None:
    """The keys `name.pop("key", ...)` takes out of the dict `name` in `scope`, where that is all that
    changes it (a wrapper's `kwargs.pop("compiler_params", default)` before it hands `**kwargs` on); None
    where it is changed in another way too."""
    if not mutates(model, scope, {name}):
        return frozenset()
    key = ("popped-keys", id(scope), name)
    found = dict.get(model.eval_cache, key, _MISSING)
    if found is _MISSING:
        found = _popped_keys(scope, name)
        model.eval_cache.keep(key, found, reads.standalone(("mutates", id(model), name)))
    return found


_MISSING = object()


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
