"""What one call site passes for a function's parameters, evaluated only when asked.

A parameter's value is read off its function's call sites (`Evaluator.param_from_call_sites`):
it needs the one argument that binds it, not the others, each of which may be followed through its
own function's call sites in turn (a kernel file of a big package: most of a first analysis).
"""

from __future__ import annotations

import ast

from . import reads
from .values import UNKNOWN, Value


class CallArguments:
    """The arguments of one call: all of them (`values`, as `Evaluator.bind_arguments` takes them),
    or only what binds one parameter (`bound`, as `bind_arguments(...).get(param)` gives it)."""

    __slots__ = ("evaluator", "model", "args", "keywords", "given")

    def __init__(self, evaluator, model, args: list[ast.expr], keywords: list[ast.keyword],
                 given: tuple[list[Value], dict[str, Value]] | None = None):
        self.evaluator, self.model = evaluator, model
        self.args, self.keywords = args, keywords  # the positional ones before any `*`, the named ones
        self.given = given  # values already known (a `functools.partial`'s): (args, kwargs)

    @classmethod
    def of(cls, evaluator, model, call: ast.Call, skip: int = 0) -> "CallArguments":
        args = []
        for arg in call.args:
            if isinstance(arg, ast.Starred):
                break
            args.append(arg)
        return cls(evaluator, model, args[skip:], [k for k in call.keywords if k.arg])

    def values(self) -> tuple[list[Value], dict[str, Value]]:
        if self.given is not None:
            return self.given
        value, model = self.evaluator.value, self.model
        return [value(model, a) for a in self.args], {k.arg: value(model, k.value) for k in self.keywords}

    def bound(self, func, param: str) -> Value:
        """What binds `param` of `func` at this call: its keyword, else its position, else its default."""
        if self.given is not None:
            return self.evaluator.bind_arguments(func, *self.given).get(param, UNKNOWN)
        node = func.node
        spec = node.args
        reads.note(("own", id(func.model.scope_of(node))))  # its signature
        positional = [*spec.posonlyargs, *spec.args]
        if func.self_value is not None and positional:
            if positional[0].arg == param:
                return func.self_value
            positional = positional[1:]
        value = self.evaluator.value
        if param in {p.arg for p in [*positional, *spec.kwonlyargs]}:
            for keyword in reversed(self.keywords):  # the last one given wins, as in a dict of them
                if keyword.arg == param:
                    return value(self.model, keyword.value)
            for index, arg in enumerate(positional[:len(self.args)]):
                if arg.arg == param:
                    return value(self.model, self.args[index])
        for arg, default in [*zip(positional[len(positional) - len(spec.defaults):], spec.defaults),
                             *zip(spec.kwonlyargs, spec.kw_defaults)]:
            if arg.arg == param and default is not None:
                return value(func.model, default)
        return UNKNOWN
