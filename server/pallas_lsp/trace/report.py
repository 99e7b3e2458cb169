"""Text rendering of a trace result (the JSON form is the result itself; docs/trace.md)."""

from __future__ import annotations

import ast
import os

from ..quoting import quoted_name, visible
from ..source_text import read_source, split_lines


def _visible(line: str) -> str:
    """A traced program's ANSI sequences, a `\\r` or an OSC would drive the terminal that shows the
    report: every control character but a tab is shown as Python writes it."""
    return visible(line, keep="\t")


def one_based_columns(result: dict, notebook=None) -> dict:
    """The result as `pallas-lsp trace --format json` prints it: columns are 1-based code points,
    as in `check`. JAX's frames give 0-based UTF-8 byte offsets (the LSP side converts its own).
    A location with a `cell` is in that cell of `notebook` (trace/notebooks.py)."""
    lines_of: dict = {}

    def code_point(path, line, offset, cell=None) -> int:
        key = (path, cell)
        if key not in lines_of:
            try:
                lines_of[key] = (split_lines(notebook.cells[cell - 1].source) if cell is not None and notebook is not None
                                 else split_lines(read_source(path)))
            except (OSError, ValueError, IndexError):
                lines_of[key] = None
        lines = lines_of[key]
        if lines is None or not isinstance(line, int) or not 0 < line <= len(lines):
            return offset + 1
        return len(lines[line - 1].encode("utf-8")[:offset].decode("utf-8", "replace")) + 1

    def convert(value):
        if isinstance(value, list):
            return [convert(item) for item in value]
        if not isinstance(value, dict):
            return value
        value = {key: convert(item) for key, item in value.items()}
        if "path" in value:
            for column, line in (("column", "line"), ("end_column", "end_line")):
                if isinstance(value.get(column), int):
                    value[column] = code_point(value["path"], value.get(line), value[column], value.get("cell"))
        return value

    return convert(result)


def _where(location: dict, cwd: str) -> str:
    path = location.get("path") or "?"
    try:
        rel = os.path.relpath(path, cwd)
        path = rel if not rel.startswith("..") else path
    except ValueError:
        pass
    path = quoted_name(path)
    if location.get("cell") is not None:  # as `check` names a place in a notebook
        return f"{path}:cell {location['cell']}:{location.get('line', '?')}"
    return f"{path}:{location.get('line', '?')}"


def _at_body(kernel: dict, bodies: dict) -> dict:
    """The kernel's location at its body's first line (`def`, or its first decorator), as the report's
    other lines name a body: JAX's location is the first line of the body's code."""
    location = kernel["location"]
    path, line, name = location.get("path"), location.get("line"), kernel.get("name")
    if location.get("cell") is not None or not isinstance(path, str) or not isinstance(line, int):
        return location
    if path not in bodies:
        try:
            bodies[path] = [node for node in ast.walk(ast.parse(read_source(path)))
                            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
        except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
            bodies[path] = []
    around = [node for node in bodies[path] if node.name == name and node.lineno <= line <= (node.end_lineno or line)]
    if not around:
        return location
    body = max(around, key=lambda node: node.lineno)  # the innermost
    return {**location, "line": min([body.lineno, *(d.lineno for d in body.decorator_list)])}


def _seconds(value) -> str:
    return f"{value:.3f}s" if isinstance(value, (int, float)) else "?"


def kernel_summary(kernel: dict) -> str:
    barriers = kernel.get("barriers", 0)
    semaphores = kernel.get("gmem_semaphores", 0)
    parts = [f"shared memory {kernel.get('smem_bytes', 0):,} bytes",
             f"{barriers} barrier{'s' if barriers != 1 else ''}"]
    tmem = kernel.get("tmem_cols", 0) + kernel.get("tmem_collective_cols", 0)
    parts.append(f"{tmem} TMEM column{'s' if tmem != 1 else ''}" +
                 (" (collective)" if kernel.get("tmem_collective_cols") else ""))
    parts.append(f"{semaphores} global semaphore{'s' if semaphores != 1 else ''}")
    return ", ".join(parts)


def format_text(result: dict, cwd: str | None = None) -> str:
    cwd = cwd or os.getcwd()
    lines = []
    target = f"{quoted_name(str(result.get('path', '?')))}::{result.get('function', '?')}"
    try:
        target = f"{quoted_name(os.path.relpath(result['path'], cwd))}::{result['function']}"
    except (KeyError, ValueError, TypeError):
        pass
    source = result.get("args_source")
    if result.get("args"):
        called = f"({', '.join(result['args'])})"
    elif source:  # found, and none: it takes no arguments
        called, source = "()", None
    else:
        missing = (result.get("error") or {}).get("type") == "ArgsNotFound"
        called = " (arguments not found)" if missing else " (no arguments)"
    lines.append(f"trace {target}{called}" + (f"  [arguments from {source}]" if source else ""))
    if result.get("traced_because"):
        lines.append(result["traced_because"])
    if result.get("platform_reason"):
        lines.append(f"platform {result['platform_reason']}")
    if result.get("jax"):
        # A failure says its stage below: "lowered" or "not compiled (no local cuda device)" above
        # "FAILED (lower)" would contradict it.
        compiled = ("" if not result.get("ok") else ", compiled" if result.get("compiled") else
                    f", not compiled ({result.get('compile_skipped')})" if result.get("compile_skipped") else ", not compiled")
        lines.append(f"jax {result['jax']} (jaxlib {result.get('jaxlib') or '?'}), Python {result.get('python') or '?'}; "
                     f"{'lowered' if result.get('ok') else 'lowering'} for "
                     f"{result.get('lowering_platform', result.get('platform'))}"
                     + (f" (as an abstract {result['abstract_device']}: no {'TPU' if 'TPU' in result['abstract_device'] else 'GPU'} here)" if result.get("abstract_device") else "")
                     + compiled)
    timings = result.get("timings") or {}
    worker = result.get("worker") or {}
    stages = [f"{name} {_seconds(timings[name])}" for name in ("import", "resolve", "trace", "lower", "compile")
              if name in timings]
    if stages or "wall" in timings:
        start = (f"worker start {_seconds(worker.get('start_seconds'))} (jax import "
                 f"{_seconds(worker.get('jax_import_seconds'))}), " if worker.get("cold") else "warm worker, ")
        lines.append(f"timings: {start}{', '.join(stages)}; wall {_seconds(timings.get('wall'))}")
    bodies: dict = {}
    for kernel in result.get("kernels") or []:
        where = f" ({_where(_at_body(kernel, bodies), cwd)})" if kernel.get("location") else ""
        lines.append(f"kernel {kernel.get('name')}{where}: {kernel_summary(kernel)}")
    error = result.get("error")
    if result.get("ok"):
        lines.append("OK")
    elif error:
        lines.append(f"FAILED ({error.get('stage') or result.get('stage')}): {error.get('type')}: {error.get('message')}")
        for location in error.get("locations") or []:
            why = f"  {location['why']}" if location.get("why") else ""
            lines.append(f"  {_where(location, cwd)}{why}")
    output = (result.get("output") or "").strip()
    if output:
        tail = output.splitlines()[-10:]
        lines.append("output of the traced code (last lines):")
        lines.extend(f"  | {line}" for line in tail)
    return "".join(_visible(line) + "\n" for text in lines for line in text.split("\n"))
