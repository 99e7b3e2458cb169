"""Calls of a `functools.singledispatch` function: the implementation registered for the argument's class.

`@functools.singledispatch def accum_type(fmt, block): raise NotImplementedError` only dispatches: what a call
gives is what the implementation registered for `type(fmt)` returns (`@accum_type.register def _(fmt:
Int8Format, ...)`, `@accum_type.register(Int8Format)`, `accum_type.register(Int8Format, impl)`), the nearest
class of its bases first, as Python does. A `singledispatchmethod` dispatches on the first argument after
`self`. Where the argument's class is not known, the implementations must all agree, else nothing is known.
"""

from __future__ import annotations

import ast
import builtins

from . import reads
from .frames import one_of, terminal_name
from .values import UNKNOWN, Api, ClassValue, Const, Func, Instance, OneOf, Value

_DISPATCHERS = {"singledispatch", "singledispatchmethod"}
_MAX_BASES = 16  # classes walked up from the argument's, at most


def dispatches(func: Func) -> bool:
    """Whether `func` is decorated as a single-dispatch generic function."""
    decorators = getattr(func.node, "decorator_list", ())
    return any(terminal_name(d) in _DISPATCHERS for d in decorators)


def dispatched_call(evaluator, func: Func, args: list[Value], result_of) -> Value:
    """What calling the generic `func` with `args` gives; `result_of(impl)` evaluates one implementation."""
    registered = _registrations(evaluator, func)
    if not args:
        return UNKNOWN
    argument = args[0]
    options = argument.options if isinstance(argument, OneOf) else (argument,)
    results = []
    for option in options:
        impl = _implementation(evaluator, func, registered, option)
        if impl is None:  # the class is not known: every implementation may run
            every = [func, *(i for _, i in registered)]
            results.extend(_returned(result_of, i) for i in every if not _always_raises(i))
            continue
        results.append(_returned(result_of, impl))
    return one_of(results) if results else UNKNOWN


def _returned(result_of, impl: Func) -> Value:
    return UNKNOWN if _always_raises(impl) else result_of(impl)


def _always_raises(func: Func) -> bool:
    """A body that only raises (`raise NotImplementedError(...)`, after a docstring): the base of a generic
    function no argument is meant to reach."""
    body = getattr(func.node, "body", None)
    if not isinstance(body, list):
        return False
    statements = [s for s in body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return bool(statements) and all(isinstance(s, ast.Raise) for s in statements)


def _implementation(evaluator, func: Func, registered: list, argument: Value) -> Func | None:
    """The implementation for `argument`'s class (the base function where no registered class is its own or a
    base of it); None where its class is not known."""
    if isinstance(argument, Instance) and not argument.declared and argument.member is None:
        for cls in _classes_in_order(evaluator, argument.cls):
            for key, impl in reversed(registered):  # a later registration replaces an earlier one
                if key == cls:
                    return impl
        return func
    if isinstance(argument, Const) and argument.value is not None:
        names = [c.__name__ for c in type(argument.value).__mro__]
        for name in names:
            for key, impl in reversed(registered):
                if key == ("builtin", name):
                    return impl
        return func
    return None


def _classes_in_order(evaluator, cls: ClassValue) -> list:
    """`cls` and its bases, nearest first (breadth-first: the MRO where the hierarchy is a tree)."""
    found: list = []
    queue = [cls]
    while queue and len(found) < _MAX_BASES:
        current = queue.pop(0)
        if current in found:
            continue
        found.append(current)
        reads.note(("own", id(current.node)))  # its bases
        queue.extend(evaluator._bases(current))
    return found


def _registrations(evaluator, func: Func) -> list[tuple[object, Func]]:
    """(class key, implementation) for each registration written beside `func` (its module, or its class for a
    `singledispatchmethod`): a ClassValue, or ("builtin", name) for `int`, `str`..."""
    model = func.model
    scope = model.scope_of(func.node)
    reads.note(("own", id(scope)))  # the statements beside it
    name = func.node.name
    body = scope.body if isinstance(scope, (ast.Module, ast.ClassDef)) else []
    found: list[tuple[object, Func]] = []
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in statement.decorator_list:
                keys = _decorator_keys(evaluator, model, decorator, statement, name)
                found.extend((key, Func(model, statement, func.self_value)) for key in keys)
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            call = statement.value  # `accum_type.register(Int8Format, _int8_accum)`
            if _is_register(call.func, name) and len(call.args) == 2:
                impl = evaluator.value(model, call.args[1])
                if isinstance(impl, Func):
                    found.extend((key, impl) for key in _class_keys(evaluator, model, call.args[0]))
    return found


def _is_register(expr: ast.AST, name: str) -> bool:
    return isinstance(expr, ast.Attribute) and expr.attr == "register" and \
        isinstance(expr.value, ast.Name) and expr.value.id == name


def _decorator_keys(evaluator, model, decorator: ast.expr, impl: ast.AST, name: str) -> list:
    if _is_register(decorator, name):  # `@accum_type.register`: the first parameter's annotation names it
        params = [*impl.args.posonlyargs, *impl.args.args]
        if isinstance(model.enclosing_class(impl), ast.ClassDef) and params:
            params = params[1:]  # a singledispatchmethod's `self`
        if params and params[0].annotation is not None:
            return _class_keys(evaluator, model, params[0].annotation)
        return []
    if isinstance(decorator, ast.Call) and _is_register(decorator.func, name) and decorator.args:
        return _class_keys(evaluator, model, decorator.args[0])  # `@accum_type.register(Int8Format)`
    return []


def _class_keys(evaluator, model, expr: ast.expr) -> list:
    """The classes `expr` names: one, or each of a union (`A | B`, `typing.Union[A, B]`)."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitOr):
        return _class_keys(evaluator, model, expr.left) + _class_keys(evaluator, model, expr.right)
    if isinstance(expr, ast.Subscript) and terminal_name(expr.value) == "Union":
        parts = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
        return [key for part in parts for key in _class_keys(evaluator, model, part)]
    if isinstance(expr, ast.Name) and isinstance(getattr(builtins, expr.id, None), type) and \
            model.lookup(expr.id, model.scope_of(expr), expr.lineno) is None:
        return [("builtin", expr.id)]
    value = evaluator.value(model, expr)
    if isinstance(value, ClassValue):
        return [value]
    if isinstance(value, Api):  # a library class: nothing user code makes an instance of here
        return [("api", value.name)]
    return []
