"""The `return` statements a call of a user function can reach, for the evaluator.

A helper shared by a TPU and a GPU path (`if platform == "tpu": return pltpu.VMEM(...)`) returns one type
per argument: the returns an `if` whose test is static for the call's arguments does not take are left out.
"""

from __future__ import annotations

import ast

from .model import child_nodes
from .values import Const

# Comparisons of two constants (`platform == "tpu"`) evaluated as Python does.
COMPARISONS = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b}


def reachable_returns(value, model, body: list[ast.stmt], frame) -> tuple[list[ast.Return], bool]:
    """The `return`s of a function body these arguments (`frame`) can reach, and whether the body always
    returns; `value(model, expr, frame)` evaluates a test. An `if` whose test is static under the frame keeps
    only the branch taken; every other statement keeps all its returns."""
    found: list[ast.Return] = []
    for statement in body:
        if isinstance(statement, ast.Return):
            return [*found, statement], True
        if isinstance(statement, ast.If):
            test = value(model, statement.test, frame)
            branches = ([statement.body if test.value else statement.orelse] if isinstance(test, Const)
                        else [statement.body, statement.orelse])
            ends = [reachable_returns(value, model, branch, frame) for branch in branches]
            found += [node for returns, _ in ends for node in returns]
            if all(always for _, always in ends):
                return found, True
            continue
        found += list(returns_in([statement]))
    return found, False


def returns_in(statements):
    """`return` statements in these statements, not in functions nested in them."""
    stack = list(statements)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(child_nodes(node))  # no token node is a return or holds one
