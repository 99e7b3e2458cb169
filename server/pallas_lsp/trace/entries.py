"""Which module-level functions of a file can be traced: the "Trace kernel" code lenses.

An entry function launches a Pallas kernel (it is one, through a kernel decorator or an assignment
such as `add = plgpu.kernel(body, ...)`, or its body builds and calls one, or calls such a function
of the same module) and its arguments can be found (targets.py). Kernels are recognised by the
analysis core, with names resolved as everywhere else (no guessing from spellings).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..analysis.kernels import KernelIndex
from ..source_text import split_lines
from .targets import ArgSpecError, ArgsNotFound, TargetArgs, TargetNotFound, definition_line, resolve_args


@dataclass(frozen=True)
class EntryFunction:
    name: str
    line: int  # 0-based: the first decorator or the def/assignment line
    column: int
    end_column: int
    args: TargetArgs


def _top_level_statement(model, node: ast.AST) -> ast.stmt | None:
    while node is not None:
        parent = model.parents.get(node)
        if isinstance(parent, ast.Module):
            return node  # type: ignore[return-value]
        node = parent
    return None


def _bound_name(stmt: ast.stmt) -> str | None:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return stmt.name
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return stmt.target.id
    return None


def entry_functions(project, path: str, text: str) -> list[EntryFunction]:
    model = project.model(path, text)
    if model.tree is None:
        return []
    launching: dict[str, ast.stmt] = {}
    for entry in KernelIndex.of(project, model).entries:
        stmt = _top_level_statement(model, entry.node)
        name = _bound_name(stmt) if stmt is not None else None
        if name is not None:
            launching[name] = stmt
    for stmt in model.tree.body:  # wrappers calling a launching function of this module
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name not in launching:
            if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in launching
                   for n in ast.walk(stmt)):
                launching[stmt.name] = stmt
    found = []
    lines = split_lines(text)
    for name, stmt in launching.items():
        try:
            args = resolve_args(text, name)
        except (ArgSpecError, ArgsNotFound, TargetNotFound, SyntaxError):
            continue
        if args.source == "no parameters":
            continue  # a factory such as `def target(): return kernel, args`; a comment opts it in
        line = definition_line(stmt)
        indent = len(lines[line]) - len(lines[line].lstrip()) if line < len(lines) else 0
        found.append(EntryFunction(name, line, indent, len(lines[line]) if line < len(lines) else 0, args))
    return sorted(found, key=lambda e: e.line)
