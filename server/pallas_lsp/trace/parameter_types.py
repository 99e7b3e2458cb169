"""`pallas-lsp types`: every kernel body parameter's type, as JAX writes it (`Ref<gmem>{float32[128]}`).

Inferred from the source by the same engine as hovers (analysis/kernel_args.py: `?` for what is not
static), or, where the project's entry points were run with JAX in the loop (`--trace`), JAX's own
type of that parameter in a launch they reached (matched by the body's first line and the
parameter's name, as the server matches a trace's `kernel_refs`).
"""

from __future__ import annotations

import ast
import os

from ..analysis.kernel_args import body_first_line, parameters_of_module
from .entry_points import EntryRun


def parameter_types(project, files: list[str], run: EntryRun | None = None) -> list[dict]:
    """One row per (parameter, type): {"path", "line", "column", "function", "parameter", "type", "source"},
    lines and columns 1-based (code points), "source" "traced" or "inferred"; in file order."""
    traced = run.traced_refs() if run is not None else {}
    devices = run.abstract_devices() if run is not None else {}
    rows = []
    for path in files:
        try:
            model = project.model(path)
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        if model.tree is None:
            continue
        inferred = parameters_of_module(project, model)
        from_jax = traced.get(os.path.realpath(path), {})
        for node in ast.walk(model.tree):
            if not isinstance(node, ast.arg):
                continue
            leaves = _traced_leaves(from_jax, body_first_line(model, node), node.arg) if _in_function(model, node) else {}
            params = inferred.get(id(node), [])
            if not leaves and not params:
                continue
            span = model.source.span(node)
            function = model.parents[model.parents[node]]
            row = {"path": path, "line": span.line + 1, "column": span.column + 1,
                   "function": getattr(function, "name", "<lambda>"), "parameter": node.arg}
            if leaves:
                device = devices.get(os.path.realpath(path), {})
                line = body_first_line(model, node)
                rows.extend(dict(row, parameter=name, type=aval, source="traced",
                                 **({"abstract_device": device[line, name]} if (line, name) in device else {}))
                            for name, avals in leaves.items() for aval in avals)
            else:
                rows.extend(dict(row, parameter=name, type=picture, source="inferred")
                            for name, picture in dict.fromkeys((p.name, p.picture) for p in params))
    return sorted(rows, key=lambda r: (r["path"], r["line"], r["column"]))


def _traced_leaves(from_jax: dict, line: int, name: str) -> dict[str, list[str]]:
    """JAX's types of a parameter: itself, or each ref it holds where it takes several (`*refs`, a
    tuple of refs), as JAX names them (`refs[0]`, `refs[1]`, ...), in JAX's order."""
    if (line, name) in from_jax:
        return {name: from_jax[line, name]}
    return {leaf: avals for (at, leaf), avals in from_jax.items() if at == line and leaf.startswith(name + "[")}


def _in_function(model, node: ast.arg) -> bool:
    arguments = model.parents.get(node)
    return isinstance(model.parents.get(arguments), (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))


def format_text(rows: list[dict], shown_path) -> str:
    lines = [f"{shown_path(r['path'])}:{r['line']}:{r['column']}: {r['function']}.{r['parameter']}: {r['type']}"
             + (f"  (traced, for an abstract {r['abstract_device']}: none here)" if r.get("abstract_device")
                else "  (traced)" if r["source"] == "traced" else "") for r in rows]
    return "\n".join(lines) + ("\n" if lines else "")
