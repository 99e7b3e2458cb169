"""What a loop or comprehension variable holds: each item of what it iterates over, where that is known.

`for kind in (REGULAR, BARRIER)`, `{name: pl.get_global(kind) for name, kind in self.smem.items()}`,
`[pl.get_global(t) for t in TYPES]`: the variable is one of the items (a dict's keys, values or pairs),
unpacked by the target's tuple; unknown where any item, or the iterated value, is.
"""

from __future__ import annotations

import ast
from typing import Callable

from .values import UNKNOWN, Const, Mapping, OneOf, Seq, Value

_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_COMPREHENSION_CLASSES = frozenset(_COMPREHENSIONS)
_ENCLOSING = (ast.stmt, ast.Lambda)


def comprehension_of(parents: dict, node: ast.Name) -> ast.comprehension | None:
    """The `for ... in ...` clause of an enclosing comprehension whose target binds `node`'s name (the
    innermost one; a name read in a clause's own `in` part is not bound by that clause or a later one)."""
    get = parents.get
    parent = get(node)
    while parent is not None:  # asked of every name evaluated: one class look-up a level on the way up
        if parent.__class__ in _COMPREHENSION_CLASSES:
            clauses = parent.generators
            # Only the clauses before the one whose `in` part holds the name bind it there.
            visible = clauses
            for index, clause in enumerate(clauses):
                if _within(parents, node, clause.iter):
                    visible = clauses[:index]
                    break
            for clause in reversed(visible):
                if node.id in _names(clause.target):
                    return clause
        elif isinstance(parent, _ENCLOSING):  # a comprehension is in one
            return None
        parent = get(parent)
    return None


def _within(parents: dict, node: ast.AST, ancestor: ast.AST) -> bool:
    while node is not None:
        if node is ancestor:
            return True
        node = parents.get(node)
    return False


def _names(target: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def iterated(value_of: Callable[[ast.expr], Value], iterable: ast.expr) -> list[Value] | None:
    """The items iterating over `iterable` gives, in order; None where they are not known."""
    if isinstance(iterable, ast.Set) and not any(isinstance(e, ast.Starred) for e in iterable.elts):
        return [value_of(e) for e in iterable.elts]
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) and not iterable.args \
            and not iterable.keywords and iterable.func.attr in ("items", "values", "keys"):
        mapping = value_of(iterable.func.value)
        if not isinstance(mapping, Mapping):
            return None
        if iterable.func.attr == "items":
            return [Seq((Const(key), value)) for key, value in mapping.items]
        if iterable.func.attr == "values":
            return [value for _, value in mapping.items]
        return [Const(key) for key, _ in mapping.items]
    found = value_of(iterable)
    if isinstance(found, Seq):
        return list(found.items)
    if isinstance(found, Mapping):
        return [Const(key) for key, _ in found.items]
    return None


def bound_item(target: ast.AST, name: str, item: Value, one_of: Callable) -> Value:
    """What `name` in the loop target `target` holds when the loop gives `item`."""
    if isinstance(target, ast.Name):
        return item if target.id == name else UNKNOWN
    if isinstance(target, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in target.elts):
        element = next((i for i, e in enumerate(target.elts) if name in _names(e)), None)
        options = item.options if isinstance(item, OneOf) else (item,)
        if element is None or not all(isinstance(o, Seq) and len(o.items) == len(target.elts) for o in options):
            return UNKNOWN
        return one_of(bound_item(target.elts[element], name, o.items[element], one_of) for o in options)
    return UNKNOWN


def loop_variable(value_of: Callable[[ast.expr], Value], one_of: Callable, target: ast.AST, iterable: ast.expr,
                  name: str) -> Value:
    """One of the values `name` takes in `for target in iterable` (`one_of`: the evaluator's union, unknown
    where any is); unknown where the items are not known, or there are none."""
    items = iterated(value_of, iterable)
    if not items:
        return UNKNOWN
    return one_of(bound_item(target, name, item, one_of) for item in items)
