"""Whether a kernel's callers would notice one output fewer: a fix that drops a semaphore output changes
what every launch returns, so it is refused where a caller unpacks the results (jax 0.12, after such a
fix: "not enough values to unpack (expected 2, got 1)"), reads the dropped one, or hands them on whole
(the semaphore a consumer kernel waits on would be lost). Looked for in the kernel's module and the
workspace modules importing it, through names, and through the functions that return the results.
"""

from __future__ import annotations

import ast
import os

from ..analysis.kernel_model import kernel_launches, loads_bound_by
from ..analysis.values import Func

_MAX_DEPTH = 3  # functions returning the results, one inside another


def dropping_breaks_a_caller(project, entry, dropped: int, count: int) -> str | None:
    """Why a caller of `entry`'s kernel would break if output `dropped` (of `count`) went; None where every
    launch found discards the results or reads only outputs before it by constant index."""
    for model in [entry.model, *project.importers(entry.model)]:
        for launch in kernel_launches(project, model):
            if launch.kernel.node is entry.kernel.node:
                problem = _use_problem(project, model, launch.call, dropped, count, 0)
                if problem is not None:
                    return problem
    return None


def _where(model, node: ast.AST) -> str:
    return f"{os.path.basename(model.path)}:{node.lineno}"


def _use_problem(project, model, node: ast.AST, dropped: int, count: int, depth: int) -> str | None:
    """What the code around `node`, which evaluates to the kernel's results, does with them that one output
    fewer would break (None: nothing)."""
    parent = model.parents.get(node)
    at = _where(model, node)
    if isinstance(parent, ast.Expr):
        return None
    if isinstance(parent, ast.Subscript) and parent.value is node:
        index = parent.slice
        if isinstance(index, ast.Constant) and type(index.value) is int and 0 <= index.value < dropped:
            return None
        return f"a caller reads its results by an index that one output fewer changes ({at})"
    if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is node:
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        if len(targets) == 1 and isinstance(targets[0], (ast.Tuple, ast.List)):
            return f"a caller unpacks its {count} results ({at}), which one output fewer would break"
        if len(targets) == 1 and isinstance(targets[0], ast.Name) and isinstance(parent, ast.Assign):
            for load in loads_bound_by(model, parent, targets[0].id):
                problem = _use_problem(project, model, load, dropped, count, depth)
                if problem is not None:
                    return problem
            return None
    if isinstance(parent, ast.Return):
        return _returned_problem(project, model, parent, dropped, count, depth, at)
    return f"a caller uses its results whole ({at}), which one output fewer would change"


def _returned_problem(project, model, statement: ast.Return, dropped: int, count: int, depth: int,
                      at: str) -> str | None:
    """The results returned by a function: what its callers (in its module and importers) do with them."""
    function = model.enclosing_function(statement)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return f"a caller uses its results whole ({at}), which one output fewer would change"
    if depth >= _MAX_DEPTH:
        return f"{function.name} returns its results to callers too deep to follow ({at})"
    for where, call, func, _, _ in project.evaluator.call_sites_with_nodes(model, function):
        if isinstance(func, Func) and func.node is function:
            problem = _use_problem(project, where, call, dropped, count, depth + 1)
            if problem is not None:
                return problem
    return None
