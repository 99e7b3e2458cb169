"""Finding formatters for the command line: ruff-like text, a JSON array, and SARIF 2.1.0."""

from __future__ import annotations

import json
import os
import urllib.parse
from pathlib import Path

from . import __version__
from .analysis.findings import Finding
from .rules import RULES, web_doc_url

_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def display_path(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


# C escapes git uses in quoted paths; other bytes that need quoting are written in octal.
_GIT_ESCAPES = {0x07: "\\a", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0B: "\\v", 0x0C: "\\f", 0x0D: "\\r",
                0x22: '\\"', 0x5C: "\\\\"}


def git_quoted(path: str) -> str:
    """A path as git writes it in a patch (`core.quotePath`, the default): in double quotes, with C
    escapes and octal bytes, when it holds a control character, `"`, `\\`, DEL or a non-ASCII byte
    (`git apply` reads a bare name up to the end of the line: a newline in it broke the patch)."""
    data = os.fsencode(path)
    if all(0x20 <= byte < 0x7F and byte not in _GIT_ESCAPES for byte in data):
        return path
    return '"' + "".join(_GIT_ESCAPES.get(byte) or (chr(byte) if 0x20 <= byte < 0x7F else f"\\{byte:03o}")
                         for byte in data) + '"'


def diff_label(path: str) -> str:
    """A `---`/`+++` line's name as `git diff` writes it: quoted, and followed by a tab when it holds a
    space (the tab ends the name where a date could follow)."""
    quoted = git_quoted(path)
    return quoted + "\t" if " " in quoted else quoted


def as_dict(finding: Finding) -> dict:
    span = finding.span
    return {
        "path": display_path(finding.path),
        "line": span.line + 1,
        "column": span.column + 1,
        "end_line": span.end_line + 1,
        "end_column": span.end_column + 1,
        "code": finding.code,
        "severity": finding.severity,
        "message": finding.message,
    }


def format_text(findings: list[Finding], files_checked: int, files_skipped: int = 0) -> str:
    lines = [f"{display_path(f.path)}:{f.span.line + 1}:{f.span.column + 1}: {f.code} {f.message}" for f in findings]
    count = len(findings)
    if count:
        lines.append(f"Found {count} error{'s' if count != 1 else ''}." if all(f.severity == "error" for f in findings)
                     else f"Found {count} finding{'s' if count != 1 else ''}.")
    else:
        skipped = f", {files_skipped} skipped (see above)" if files_skipped else ""
        lines.append(f"All checks passed! ({files_checked} file{'s' if files_checked != 1 else ''} checked{skipped})")
    return "\n".join(lines) + "\n"


def format_json(findings: list[Finding]) -> str:
    return json.dumps([as_dict(f) for f in findings], indent=2) + "\n"


def _region(span) -> dict:
    return {"startLine": span.line + 1, "startColumn": span.column + 1,
            "endLine": span.end_line + 1, "endColumn": span.end_column + 1}


def _artifact(path: str) -> dict:
    """A SARIF artifact location: an RFC 3986 URI (percent-encoded bytes of the path), relative to
    `%SRCROOT%` (the working folder) when the file lies under it."""
    rel = display_path(path)
    if os.path.isabs(rel):
        return {"uri": Path(rel).as_uri()}
    return {"uri": urllib.parse.quote_from_bytes(os.fsencode(Path(rel).as_posix()), safe="/"), "uriBaseId": "%SRCROOT%"}


def format_sarif(findings: list[Finding]) -> str:
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
            "locations": [{"physicalLocation": {"artifactLocation": _artifact(finding.path),
                                                "region": _region(finding.span)}}],
        }
        if finding.related:
            result["relatedLocations"] = [
                {"id": i, "message": {"text": r.message},
                 "physicalLocation": {"artifactLocation": _artifact(r.path), "region": _region(r.span)}}
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
