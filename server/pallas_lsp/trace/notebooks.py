"""Tracing a kernel defined in a notebook (issue 23).

The code cells up to and including the cell that defines the traced launch, as `check` reads them
(magics blanked, cells JAX never runs as Python left out: `analysis.notebooks`), are written to a
module in a private folder, traced there as any module (the notebook's own folder is on `sys.path`
too, as IPython has it), and the folder is removed. Every location in the result (`error.locations`,
each kernel's `location`, `kernel_refs`) is then a location in the notebook: `path` the notebook,
`cell` its number as the notebook shows it (1-based among all cells), `line` and `end_line`
1-based within that cell; columns are unchanged (a cell's line is the module's line).
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import tempfile

from ..analysis.notebooks import Notebook

_NOT_IDENTIFIER = re.compile(r"\W")


def cell_of_target(notebook: Notebook, function: str, line: int | None) -> int | None:
    """The cell (0-based among all cells) that defines the traced `function`, whose definition is
    at `line` of the notebook's module (0-based; None: the last module-level one that binds it)."""
    if line is None:
        from .targets import find_definition

        try:
            found = find_definition(ast.parse(notebook.module), function)
        except (SyntaxError, ValueError, RecursionError):
            return None
        if found is None:
            return None
        line = found.lineno - 1
    where = notebook.to_cell(line, 0)
    return None if where is None else where[0]


def annotate_in_cells(result: dict, notebook: Notebook) -> dict:
    """`TracePlan.annotate`'s notes (`traced_because`, `platform_reason`) with cell lines, and the
    definition's module line (`definition_line`, where the server put it) as a line of its cell
    (`definition_cell`, the cell's number)."""
    for key in ("traced_because", "platform_reason"):
        if isinstance(result.get(key), str):
            result[key] = notebook.cell_lines_in(result[key])
    where = notebook.to_cell(result["definition_line"], 0) if isinstance(result.get("definition_line"), int) else None
    if where is not None:
        result["definition_line"], result["definition_cell"] = where[1], notebook.cell_number(where[0])
    return result


def at_module_lines(result: dict, notebook: Notebook) -> dict:
    """A notebook trace's kernels and kernel refs at lines of the notebook's module (1-based), as
    the hovers and lenses that show them read the notebook (the result gives cell lines)."""

    def moved(location):
        if not isinstance(location, dict) or not isinstance(location.get("cell"), int):
            return location
        where = notebook.to_module(location["cell"] - 1, location["line"] - 1, 0)
        return location if where is None else {**location, "line": where[0] + 1}

    return {**result, "kernels": [{**k, "location": moved(k.get("location"))} for k in result.get("kernels") or []],
            "kernel_refs": [moved(ref) for ref in result.get("kernel_refs") or []]}


def trace_notebook_target(trace, notebook_path: str, notebook: Notebook, function: str, line: int | None,
                          **options) -> dict | None:
    """`trace_notebook_cells` through the cell that defines `function` (at module `line`, as
    `cell_of_target` reads it); None where no cell does."""
    cell = cell_of_target(notebook, function, line)
    if cell is None:
        return None
    return trace_notebook_cells(trace, notebook_path, notebook, cell, function=function, **options)


def trace_notebook_cells(trace, notebook_path: str, notebook: Notebook, cell: int, **options) -> dict:
    """`trace(module_path, source=..., extra_roots=[...], **options)` (a `trace_target` with its
    pool, interpreter and root bound) on the cells through `cell`; the result points into the notebook."""
    notebook_path = os.path.realpath(notebook_path)
    source = notebook.module_through(cell)
    stem = _NOT_IDENTIFIER.sub("_", os.path.splitext(os.path.basename(notebook_path))[0]) or "notebook"
    folder = tempfile.mkdtemp(prefix="pallas-trace-notebook-")
    module_path = os.path.realpath(os.path.join(folder, f"{stem}_cells.py"))
    try:
        with open(module_path, "w", encoding="utf-8", newline="") as file:
            file.write(source)
        result = trace(module_path, source=source, extra_roots=[os.path.dirname(notebook_path)], **options)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return in_notebook(result, notebook, notebook_path, module_path, cell)


def in_notebook(result: dict, notebook: Notebook, notebook_path: str, module_path: str, cell: int) -> dict:
    """The result with the written module's locations as the notebook's (see the module docstring)."""

    def moved(location):
        if not isinstance(location, dict) or location.get("path") != module_path or not isinstance(location.get("line"), int):
            return location
        where = notebook.to_cell(location["line"] - 1, 0)
        if where is None:
            return location
        location = {**location, "path": notebook_path, "cell": notebook.cell_number(where[0]), "line": where[1] + 1}
        if isinstance(location.get("end_line"), int):
            end = notebook.to_cell(location["end_line"] - 1, 0)
            if end is not None and end[0] == where[0]:
                location["end_line"] = end[1] + 1
            else:  # past its cell: the location ends with its line
                location.pop("end_line")
                location.pop("end_column", None)
        return location

    result = dict(result)
    result["path"] = notebook_path
    result["notebook"] = {"cells": [notebook.cell_number(c) for c in notebook.module_cells() if c <= cell],
                          "cell": notebook.cell_number(cell)}
    if isinstance(result.get("error"), dict):
        result["error"] = {**result["error"], "locations": [moved(loc) for loc in result["error"].get("locations") or []]}
    result["kernels"] = [{**kernel, "location": moved(kernel.get("location"))} if isinstance(kernel, dict) else kernel
                         for kernel in result.get("kernels") or []]
    if "kernel_refs" in result:
        result["kernel_refs"] = [moved(ref) for ref in result["kernel_refs"] or []]
    if isinstance(result.get("files"), dict):  # the written module is gone: not one of the user's files
        result["files"] = {path: stamp for path, stamp in result["files"].items() if path != module_path}
    return result
