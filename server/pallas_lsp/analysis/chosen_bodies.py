"""Functions chosen at run time: `a if flag else b`, `custom or default`, `BODIES[name]`,
`getattr(self, f"_{name}_kernel")`, a factory returning one of several. Where every option is a user function (or a
`functools.partial` of one) the choice is OneOf them: a launch of it is a launch of each, as JAX traces whichever is
chosen. A choice among other values (dtypes, shapes) stays unknown, as before.

Where no such choice is known (`BODIES.get(name)`, a registry filled at run time), the functions named where a
launch's body is computed are `undetermined_bodies`: not code that runs outside a kernel either (a rule knows the
body or stays silent).
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Callable, Iterable

from .classes import class_members
from .comparisons import truth
from .frames import one_of
from .returns import returns_in
from .values import (UNKNOWN, ClassValue, Const, Func, Instance, KeyedChoice, Mapping, ModuleValue, OneOf, Partial, Seq,
                     Value)

if TYPE_CHECKING:
    from .model import ModuleModel

_MAX_NAMED_DEPTH = 4  # names and factories followed from a launch's body argument


def is_function_value(value: Value) -> bool:
    """A user function, a partial of one, or one of several such."""
    while isinstance(value, Partial):
        value = value.func
    if isinstance(value, OneOf):
        return all(is_function_value(option) for option in value.options)
    return isinstance(value, Func)


def function_choice(values: Iterable[Value]) -> Value:
    """OneOf `values` where each is a user function (or a partial of one); unknown otherwise."""
    values = list(values)
    if values and all(is_function_value(value) for value in values):
        return one_of(values)
    return UNKNOWN


def function_options(value: Value) -> list[Value]:
    """Each function `value` may be: a OneOf spread out, also under partials (`partial(a if c else b, k=1)` is
    `partial(a, k=1)` or `partial(b, k=1)`)."""
    if isinstance(value, OneOf):
        return [found for option in value.options for found in function_options(option)]
    if isinstance(value, Partial) and isinstance(value.func, (OneOf, Partial)):
        return [Partial(option, value.args, value.kwargs, value.node) for option in function_options(value.func)]
    return [value]


def either_function(node: ast.BoolOp, value_of: Callable[[ast.expr], Value]) -> Value:
    """`custom or default` where each operand is a function or a false constant (None): one of the functions
    (a function is true). Unknown where an operand is neither, or where the last may be false."""
    if not isinstance(node.op, ast.Or):
        return UNKNOWN
    chosen: list[Value] = []
    for part in node.values:
        value = value_of(part)
        falls_through = False
        for option in value.options if isinstance(value, OneOf) else (value,):
            if is_function_value(option):
                chosen.append(option)
            elif truth(option) is False:
                falls_through = True
            else:
                return UNKNOWN
        if not falls_through:
            return function_choice(chosen)
    return UNKNOWN  # the last operand may be false: `or` gives it


def looked_up_function(base: Value, index: Value) -> Value:
    """`BODIES[name]` of a dict or list of functions, `name` not known: one of them (a KeyedChoice)."""
    if isinstance(index, Const):
        return UNKNOWN
    if isinstance(base, Mapping):
        return keyed_choice(value for _, value in base.items)
    if isinstance(base, Seq):
        return keyed_choice(base.items)
    return UNKNOWN


def keyed_choice(values: Iterable[Value]) -> Value:
    """A KeyedChoice of `values` where each is a function (or a partial of one); unknown otherwise."""
    found = function_choice(values)
    if found is UNKNOWN:
        return UNKNOWN
    return KeyedChoice(found.options if isinstance(found, OneOf) else (found,))


def getattr_value(evaluator, model: "ModuleModel", node: ast.Call, frame) -> Value:
    """`getattr(obj, name)`: the attribute where `name` is known; where it is an f-string of unknown parts
    (`getattr(self, f"_{self.op}_kernel")`), one of the methods or functions whose names fit, if all are functions."""
    if len(node.args) not in (2, 3) or node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
        return UNKNOWN
    base = evaluator.value(model, node.args[0], frame)
    name = evaluator.value(model, node.args[1], frame)
    if isinstance(name, Const) and isinstance(name.value, str):
        return evaluator.attribute(model, base, name.value)
    if isinstance(name, OneOf) and all(isinstance(o, Const) and isinstance(o.value, str) for o in name.options):
        return one_of(evaluator.attribute(model, base, o.value) for o in name.options)
    pattern = _name_pattern(evaluator, model, node.args[1], frame)
    if pattern is None:
        return UNKNOWN
    fitting = [attr for attr in _attribute_names(evaluator, base) if pattern.fullmatch(attr)]
    return keyed_choice(evaluator.attribute(model, base, attr) for attr in fitting)


def _name_pattern(evaluator, model: "ModuleModel", node: ast.expr, frame) -> re.Pattern | None:
    """A pattern for the names an f-string may give: its known parts as written, each unknown part any name
    part. None where nothing of it is known (any attribute may be asked for)."""
    if not isinstance(node, ast.JoinedStr):
        return None
    parts, known = [], False
    for value in node.values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            parts.append(re.escape(value.value))
            known = known or bool(value.value)
            continue
        found = evaluator.value(model, value.value, frame) if isinstance(value, ast.FormattedValue) else UNKNOWN
        if isinstance(found, Const) and isinstance(found.value, (str, int)) and value.format_spec is None \
                and value.conversion == -1:
            parts.append(re.escape(str(found.value)))
            known = True
        else:
            parts.append(r"\w+")
    return re.compile("".join(parts)) if known else None


def _attribute_names(evaluator, base: Value) -> list[str]:
    """Names `base` defines that getattr may give: a class's (and its bases') members, a module's functions."""
    if isinstance(base, ModuleValue):
        return [s.name for s in base.model.tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    cls = base.cls if isinstance(base, Instance) else base if isinstance(base, ClassValue) else None
    names: list[str] = []
    seen: set[int] = set()
    queue = [cls] if cls is not None else []
    while queue and len(seen) < 16:
        current = queue.pop(0)
        if id(current.node) in seen:
            continue
        seen.add(id(current.node))
        names += [name for name in class_members(current.node) if name not in names]
        queue += evaluator._bases(current)
    return names


def undetermined_bodies(evaluator, model: "ModuleModel", entries) -> set[int]:
    """Node ids of the functions named where the body of a launch whose body is not known is computed (its
    argument, the names it reads as assigned in its function, the returns of a factory it calls): each may be
    the body, so none is code that runs outside a kernel."""
    found: set[int] = set()
    for entry in entries:
        if entry.body is not None or entry.model is not model or not isinstance(entry.node, ast.Call):
            continue
        for argument in [*entry.node.args, *(k.value for k in entry.node.keywords)]:
            _named_functions(evaluator, model, argument, found, 0, set())
    return found


def _named_functions(evaluator, model: "ModuleModel", expr: ast.AST, found: set[int], depth: int,
                     visited: set[int]) -> None:
    if depth > _MAX_NAMED_DEPTH or id(expr) in visited:
        return
    visited.add(id(expr))
    for node in ast.walk(expr):
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
            for option in function_options(evaluator.value(model, node)):
                while isinstance(option, Partial):
                    option = option.func
                if isinstance(option, Func):
                    found.add(id(option.node))
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            for value in _assigned_values(model, node):
                _named_functions(evaluator, model, value, found, depth + 1, visited)
        elif isinstance(node, ast.Call):
            callee = evaluator.value(model, node.func)
            if isinstance(callee, Func) and callee.model is model and not isinstance(callee.node, ast.Lambda):
                for returned in returns_in(callee.node.body):
                    if returned.value is not None:
                        _named_functions(evaluator, model, returned.value, found, depth + 1, visited)


def _assigned_values(model: "ModuleModel", name: ast.Name) -> list[ast.expr]:
    """Every value the scope binding `name` assigns it (`if c: kernel = a` / `else: kernel = b`)."""
    scope = model.scope_of(name)
    while scope is not None:
        own = model.scopes.get(scope)
        bindings = own.bindings.get(name.id) if own is not None else None
        if bindings:
            return [b.value for b in bindings if b.kind == "assign" and b.value is not None]
        scope = model.outer_scope(scope)
    return []
