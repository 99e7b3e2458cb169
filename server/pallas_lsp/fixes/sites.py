"""Where a `get_global` call sits: the kernel body around it, and every launch of that body.

A fix moves the buffer out of the body and into its launches, so it needs all of them: in this
module and in workspace modules that import it (a body and its `pallas_call` often live apart).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..analysis.kernels import EntryPoint, KernelIndex
from ..analysis.values import Partial


@dataclass
class GlobalUse:
    """A `get_global` call directly in a kernel body, and the name its result is bound to."""

    model: object
    call: ast.Call
    function: ast.FunctionDef
    statement: ast.Assign | None  # `name = pl.get_global(...)`, removed by the fix
    name: str | None


def global_use(model, call: ast.Call) -> GlobalUse | None:
    function = model.enclosing_function(call)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    parent = model.parents.get(call)
    if (isinstance(parent, ast.Assign) and parent.value is call and len(parent.targets) == 1
            and isinstance(parent.targets[0], ast.Name)):
        name = parent.targets[0].id
        bindings = model.scopes[function].bindings.get(name, [])
        if len(bindings) == 1:  # bound only here: the parameter can take the name
            return GlobalUse(model, call, function, parent, name)
    return GlobalUse(model, call, function, None, None)


def importers(project, model) -> list:
    """Workspace modules whose import statements name this one (the import index)."""
    return project.importers(model)


def launches(project, model, function: ast.AST) -> list[EntryPoint]:
    """Entry points whose body is `function` (bare or in `functools.partial`)."""
    found = []
    for source in [model, *importers(project, model)]:
        for entry in KernelIndex.of(project, source).entries:
            body = entry.body
            if body is not None and body.node is function and entry not in found:
                found.append(entry)
    return found


def bound_positional(entry: EntryPoint) -> int | None:
    """Positional arguments `functools.partial` binds before the kernel's own; None if unknown."""
    count, value = 0, entry.kernel.body
    while isinstance(value, Partial):
        count += len(value.args)
        value = value.func
    return count


def grid_rank(entry: EntryPoint) -> tuple[int | None, int | None]:
    """(rank, number of blocks) of the launch grid; (0, 1) without one; None where unknown."""
    from ..analysis.values import Const, Seq

    found = entry.kernel.kwarg("grid")
    if found is None:
        return 0, 1
    value = found[0]
    if isinstance(value, Const) and type(value.value) is int:
        return 1, value.value
    if isinstance(value, Seq):
        sizes = [v.value if isinstance(v, Const) and type(v.value) is int else None for v in value.items]
        blocks = 1
        for size in sizes:
            blocks = None if size is None or blocks is None else blocks * size
        return len(sizes), blocks
    return None, None


def is_call_form(entry: EntryPoint) -> bool:
    return isinstance(entry.node, ast.Call) and entry.kernel.node is entry.node and entry.body is not None \
        and not _is_decorator(entry)


def _is_decorator(entry: EntryPoint) -> bool:
    parent = entry.model.parents.get(entry.node)
    return isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and entry.node in parent.decorator_list


def decorated_function(entry: EntryPoint) -> ast.AST | None:
    parent = entry.model.parents.get(entry.node)
    if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and entry.node in parent.decorator_list:
        return parent
    return None


def interpreted_anywhere(project, model, function: ast.AST) -> bool:
    """True when some kernel launched in this module or its importers runs `function` interpreted."""
    from ..analysis.kernels import reachable_functions

    for source in [model, *importers(project, model)]:
        for entry in KernelIndex.of(project, source).entries:
            if entry.interpret and entry.body is not None and any(
                    f.node is function for f in reachable_functions(project, entry.body)):
                return True
    return False
