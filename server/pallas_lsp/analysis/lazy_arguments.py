"""A helper's arguments evaluated when its returns read them, not before the call.

`bits = get_dtype_bitwidth(dtype)` in tpu-inference returns `dtypes.itemsize_bits(dtype)`, a call of an API
whose result is unknown whatever it is given: evaluating `dtype` first asked every call site of the calling
function in the workspace (76 modules modelled, two thirds of the kernel file's first analysis) for nothing.
Here each argument is an `Unforced` until the callee's evaluation reads its parameter (`forced`).

What a helper's returns give is kept per function by the values of the parameters its evaluations read (the
set grows as calls read more: a call evaluates those first, then looks the answer up), so calls passing the
same values for them share one answer, as they did when the key was every argument's value.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from .values import UNKNOWN, Func, Mapping, Seq, Value

if TYPE_CHECKING:  # the evaluator (evaluate.py imports this module) is not named: no circle of modules
    from .model import ModuleModel


class Unforced:
    """One argument of a call, evaluated (once) where its parameter is first read."""

    __slots__ = ("evaluator", "model", "node", "frame", "value")

    def __init__(self, evaluator, model: "ModuleModel", node: ast.expr, frame):
        self.evaluator, self.model, self.node, self.frame = evaluator, model, node, frame
        self.value: Value | None = None

    def force(self) -> Value:
        if self.value is None:
            self.value = self.evaluator.value(self.model, self.node, self.frame)
        return self.value


class UnforcedRest:
    """What a function's `*args` (a `Seq`) or `**kwargs` (a `Mapping`) gets: the arguments no other parameter
    takes, evaluated (once) where it is first read."""

    __slots__ = ("make", "value")

    def __init__(self, make):
        self.make = make
        self.value: Value | None = None

    def force(self) -> Value:
        if self.value is None:
            self.value = self.make()
        return self.value


_LEFT_FOR_LATER = (Unforced, UnforcedRest)


def forced(value) -> Value:
    """A parameter's value as a frame holds it, evaluated now if it was left for later."""
    return value.force() if value.__class__ in _LEFT_FOR_LATER else value


def lazily_callable(func: Value, node: ast.Call) -> bool:
    """A call whose arguments can be left for later: a plain function called with no `*` or `**` spread (what
    binds each parameter is then known before any is evaluated)."""
    if func.__class__ is not Func:
        return False
    return not any(a.__class__ is ast.Starred for a in node.args) and all(k.arg is not None for k in node.keywords)


def lazy_return(evaluator, model: "ModuleModel", func: Func, node: ast.Call, frame,
                depth: int) -> Value:
    """What `func` returns at the call `node` (see `lazily_callable`), its arguments evaluated as read."""
    args = [Unforced(evaluator, model, a, frame) for a in node.args]
    kwargs = {k.arg: Unforced(evaluator, model, k.value, frame) for k in node.keywords}
    params = evaluator.bind_arguments(func, args, kwargs)
    _bind_rest(func, params, args, kwargs)
    read_before = evaluator.params_read.get(id(func.node), ())
    cache = func.model.eval_cache
    key = _key(func, params, read_before)
    if key is not None and key in cache:
        return cache[key]
    result = evaluator.returns_in_frame(func, params, depth)
    read = tuple(sorted({*read_before, *(name for name, value in params.items()
                                         if value.__class__ in _LEFT_FOR_LATER and value.value is not None)}))
    if read != read_before:
        if len(evaluator.params_read) >= _MAX_REMEMBERED:  # a hint only (the key names what it holds): a long
            evaluator.params_read.clear()  # session's functions, parsed again and again, are not all kept
        evaluator.params_read[id(func.node)] = read
        key = _key(func, params, read)
    if key is not None and evaluator.within_budget():
        cache.keep(key, result)
    return result


_MAX_REMEMBERED = 1 << 16


def _bind_rest(func: Func, params: dict, args: list[Unforced], kwargs: dict[str, Unforced]) -> None:
    """`*args` and `**kwargs` parameters, as `Evaluator.bind_arguments(..., complete=True)` binds them."""
    spec = func.node.args
    positional = [*spec.posonlyargs, *spec.args][1 if func.self_value is not None else 0:]
    if spec.vararg is not None:
        rest = args[len(positional):]
        params[spec.vararg.arg] = UnforcedRest(lambda: Seq(tuple(arg.force() for arg in rest)))
    if spec.kwarg is not None:
        names = {p.arg for p in [*positional, *spec.kwonlyargs]}
        named = [(k, v) for k, v in kwargs.items() if k not in names]
        params[spec.kwarg.arg] = UnforcedRest(lambda: Mapping(tuple((k, v.force()) for k, v in named)))


def _key(func: Func, params: dict, read: tuple[str, ...]) -> tuple | None:
    """The answer's key: the function, its receiver, and the value of each parameter in `read` (evaluated now)."""
    key = ("lazy-return", id(func.node), func.self_value, read, tuple(forced(params.get(name, UNKNOWN)) for name in read))
    try:
        hash(key)
    except TypeError:
        return None
    return key
