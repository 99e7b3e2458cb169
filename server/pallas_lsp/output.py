"""Finding formatters for the command line: ruff-like text, a JSON array, and SARIF 2.1.0."""

from __future__ import annotations

import json
import os
import urllib.parse
from pathlib import Path

from . import __version__
from .analysis.findings import Finding
from .quoting import git_quoted, quoted_name, visible
from .rules import RULES, web_doc_url

_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def display_path(path: str) -> str:
    """`path` relative to the working folder when it lies under it (raw: JSON and SARIF encode it)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def diff_label(path: str) -> str:
    """A `---`/`+++` line's name as `git diff` writes it: quoted, and followed by a tab when it holds a
    space (the tab ends the name where a date could follow)."""
    quoted = git_quoted(path)
    return quoted + "\t" if " " in quoted else quoted


def in_cell(path: str, span, notebooks: dict | None) -> tuple[int, object] | None:
    """(cell number as the notebook shows it, span in the cell) of a module span of a notebook."""
    notebook = (notebooks or {}).get(os.path.abspath(path))
    if notebook is None:
        return None
    where = notebook.cell_span(span, clip=True)
    return None if where is None else (notebook.cell_number(where[0]), where[1])


def as_dict(finding: Finding, notebooks: dict | None = None) -> dict:
    """One JSON finding; in a notebook, with its `cell` and lines counted in that cell (as ruff's)."""
    span = finding.span
    cell = in_cell(finding.path, span, notebooks)
    if cell is not None:
        span = cell[1]
    found = {
        "path": display_path(finding.path),
        "line": span.line + 1,
        "column": span.column + 1,
        "end_line": span.end_line + 1,
        "end_column": span.end_column + 1,
        "code": finding.code,
        "severity": finding.severity,
        "message": finding.message,
        "source": finding.source,
    }
    if finding.confirmed:
        found["confirmed"] = True
    if finding.source == "jax":  # where JAX was led to the line: the launch, the entry point
        found["related"] = [{"path": display_path(r.path), "line": r.span.line + 1, "column": r.span.column + 1,
                             "message": r.message} for r in finding.related]
    if cell is not None:
        found = {"path": found.pop("path"), "cell": cell[0], **found}
    return found


def shown_path(path: str) -> str:
    """`path` as text output and warnings print it: relative, its control characters quoted."""
    return quoted_name(display_path(path))


def text_location(path: str, span, notebooks: dict | None = None) -> str:
    """`k.py:3:5`, or `nb.ipynb:cell 2:3:5` in a notebook, as the text format names a place."""
    cell = in_cell(path, span, notebooks)
    if cell is not None:
        return f"{shown_path(path)}:cell {cell[0]}:{cell[1].line + 1}:{cell[1].column + 1}"
    return f"{shown_path(path)}:{span.line + 1}:{span.column + 1}"


def format_text(findings: list[Finding], files_checked: int, files_skipped: int = 0, notebooks: dict | None = None) -> str:
    lines = [f"{text_location(f.path, f.span, notebooks)}: {f.code} {visible(f.message)}" for f in findings]
    count = len(findings)
    if count:
        lines.append(f"Found {count} error{'s' if count != 1 else ''}." if all(f.severity == "error" for f in findings)
                     else f"Found {count} finding{'s' if count != 1 else ''}.")
    else:
        skipped = f", {files_skipped} skipped (see above)" if files_skipped else ""
        lines.append(f"All checks passed! ({files_checked} file{'s' if files_checked != 1 else ''} checked{skipped})")
    return "\n".join(lines) + "\n"


def format_json(findings: list[Finding], notebooks: dict | None = None) -> str:
    return json.dumps([as_dict(f, notebooks) for f in findings], indent=2) + "\n"


def _region(span) -> dict:
    return {"startLine": span.line + 1, "startColumn": span.column + 1,
            "endLine": span.end_line + 1, "endColumn": span.end_column + 1}


def _physical(path: str, span, notebooks: dict | None) -> dict:
    """A SARIF physical location; in a notebook, where the code is written in its JSON (what a code
    scanning view of the file shows), with the cell and the lines in it as properties."""
    location = {"artifactLocation": _artifact(path), "region": _region(span)}
    cell = in_cell(path, span, notebooks)
    if cell is not None:
        number, in_cell_span = cell
        notebook = notebooks[os.path.abspath(path)]
        start = notebook.file_position(number - 1, in_cell_span.line, in_cell_span.column)
        end = notebook.file_position(number - 1, in_cell_span.end_line, in_cell_span.end_column)
        location["region"] = {"startLine": start[0] + 1, "startColumn": start[1] + 1,
                              "endLine": end[0] + 1, "endColumn": end[1] + 1}
        location["properties"] = {"cell": number, "cellRegion": _region(in_cell_span)}
    return location


def _artifact(path: str) -> dict:
    """A SARIF artifact location: an RFC 3986 URI (percent-encoded bytes of the path), relative to
    `%SRCROOT%` (the working folder) when the file lies under it."""
    rel = display_path(path)
    if os.path.isabs(rel):
        return {"uri": Path(rel).as_uri()}
    return {"uri": urllib.parse.quote_from_bytes(os.fsencode(Path(rel).as_posix()), safe="/"), "uriBaseId": "%SRCROOT%"}


def format_sarif(findings: list[Finding], notebooks: dict | None = None) -> str:
    index = {rule.CODE: i for i, rule in enumerate(RULES)}
    rules = []
    for rule in RULES:
        entry = {
            "id": rule.CODE,
            "name": rule.NAME,
            "shortDescription": {"text": rule.SUMMARY},
            "defaultConfiguration": {"level": _SARIF_LEVEL[rule.SEVERITY]},
        }
        entry["helpUri"] = web_doc_url(rule)
        rules.append(entry)
    results = []
    for finding in findings:
        result = {
            "ruleId": finding.code,
            "ruleIndex": index[finding.code],
            "level": _SARIF_LEVEL[finding.severity],
            "message": {"text": finding.message},
            "locations": [{"physicalLocation": _physical(finding.path, finding.span, notebooks)}],
        }
        if finding.source != "pallas-lsp" or finding.confirmed:
            result["properties"] = {"source": finding.source, **({"confirmed": True} if finding.confirmed else {})}
        if finding.related:
            result["relatedLocations"] = [
                {"id": i, "message": {"text": r.message},
                 "physicalLocation": _physical(r.path, r.span, notebooks)}
                for i, r in enumerate(finding.related)]
        results.append(result)
    sarif = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "pallas-lsp", "version": __version__, "rules": rules}},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": Path(os.getcwd()).as_uri() + "/"}},
            "results": results,
        }],
    }
    return json.dumps(sarif, indent=2) + "\n"
