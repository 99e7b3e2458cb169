"""What the evaluator and its parts share without importing it: a function's activation (`Frame`), the
last name of a callee, and the union of possible values."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from .values import UNKNOWN, OneOf, Value


@dataclass
class Frame:
    """Parameter values for one activation of a function; None means 'as seen from call sites'."""

    func: ast.AST
    params: dict[str, Value]
    depth: int
    # Answers in this frame, where its maker keeps them (a launch's frame: its in_specs ask for the same
    # names' bindings dozens of times): id(expr) -> (value, the reads it was noted in, steps it took, mode)
    memo: dict | None = field(default=None, compare=False, repr=False)


def terminal_name(expr: ast.AST) -> str | None:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return None


def one_of(values) -> Value:
    """One value when all agree, OneOf the distinct ones otherwise; unknown if any is."""
    options: list[Value] = []
    seen: set = set()  # the hashable ones: thousands of options (a recursion's `n - 1`) cost no square
    for value in values:
        if value is UNKNOWN:
            return UNKNOWN
        for option in value.options if isinstance(value, OneOf) else (value,):
            try:
                if option in seen:
                    continue
                seen.add(option)
            except TypeError:
                if option in options:
                    continue
            options.append(option)
    if not options:
        return UNKNOWN
    return options[0] if len(options) == 1 else OneOf(tuple(options))
