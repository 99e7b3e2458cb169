"""What JAX said about the launches the entry points reached, as findings beside the rules' own.

A launch JAX rejected is a PAL100 finding on the line of the user's code JAX's error points at. The
rules' findings and JAX's are then one list (`merge`): a rule's finding on a launch JAX rejected (a
line of its body, or of where it was built or called) is marked confirmed, and JAX's finding on that
same line is left out; a rule's error on a launch JAX lowered is dropped, with a note saying why,
where that launch is the only kernel its body makes (built at module level from a body that is no
closure) and was lowered for a GPU or TPU (an interpreted launch is only lowered here, and can still
fail when it runs). Pure data: no LSP types, no jax.
"""

from __future__ import annotations

import ast
import os
from dataclasses import replace

from ..analysis.findings import Finding, Related, Span
from ..analysis.source import noqa_codes
from ..rules import pal100_jax_error
from ..source_text import read_source, split_lines
from .entry_points import EntryRun

CONFIRMED = " (confirmed by JAX)"
DEVICE_PLATFORMS = ("cuda", "tpu")  # where lowering is JAX's whole verdict on the kernel


class _Sources:
    """Lines and trees of the files the records point into, read once."""

    def __init__(self) -> None:
        self._lines: dict[str, list[str] | None] = {}
        self._trees: dict[str, ast.Module | None] = {}

    def lines(self, path: str) -> list[str] | None:
        if path not in self._lines:
            try:
                self._lines[path] = split_lines(read_source(path))
            except (OSError, UnicodeDecodeError, ValueError):
                self._lines[path] = None
        return self._lines[path]

    def tree(self, path: str) -> ast.Module | None:
        if path not in self._trees:
            lines = self.lines(path)
            try:
                self._trees[path] = ast.parse("\n".join(lines)) if lines is not None else None
            except (SyntaxError, ValueError):
                self._trees[path] = None
        return self._trees[path]

    def code_point(self, path: str, line: int, offset: int) -> int:
        """JAX's 0-based UTF-8 byte offset on a 1-based line, as a 0-based code-point column."""
        lines = self.lines(path)
        if lines is None or not 0 < line <= len(lines):
            return offset
        return len(lines[line - 1].encode("utf-8")[:offset].decode("utf-8", "replace"))

    def span(self, location: dict) -> Span:
        path, line = location["path"], int(location["line"])
        lines = self.lines(path) or []
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        if "column" in location and "end_line" in location:
            column = self.code_point(path, line, int(location["column"]))
            end_line = int(location["end_line"])
            return Span(line - 1, column, end_line - 1, self.code_point(path, end_line, int(location["end_column"])))
        indent = len(text) - len(text.lstrip())
        return Span(line - 1, indent, line - 1, len(text))

    def statement_lines(self, path: str, line: int) -> range:
        """1-based lines of the innermost statement holding `line` (a multi-line call, a decorated def's
        decorator), or of the function whose first line (decorators included) `line` is."""
        tree = self.tree(path)
        best = None
        for node in ast.walk(tree) if tree is not None else ():
            if not isinstance(node, ast.stmt):
                continue
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
            last = node.end_lineno or node.lineno
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and line != first:
                last = node.body[0].lineno - 1 if node.body else last  # the header only, unless named by its first line
            if first <= line <= last and (best is None or last - first < len(best) - 1):
                best = range(first, last + 1)
        return best or range(line, line + 1)


def _launch_lines(record: dict, sources: _Sources) -> set[tuple[str, int]]:
    """(path, 1-based line) of a launch: its body, the statements that built and called it, and the
    lines JAX's error on it points at."""
    lines = set()
    for key in ("body", "built", "launch"):
        where = record.get(key)
        if where and where.get("path"):
            span = sources.statement_lines(where["path"], int(where["line"]))
            lines.update((where["path"], n) for n in span)
    for where in (record.get("error") or {}).get("locations") or []:  # a helper the body calls, too
        if where.get("path"):
            lines.add((os.path.realpath(where["path"]), int(where["line"])))
    return lines


def jax_findings(run: EntryRun, sources: _Sources | None = None) -> list[Finding]:
    """A PAL100 finding per line of the user's code that JAX's error on a launch points at (one per
    line and message, however many entry points reached it), `# noqa` applied."""
    sources = sources or _Sources()
    found: dict[tuple, Finding] = {}
    for result, record in run.launches():
        error = record.get("error") or {}
        if record.get("verdict") != "rejected" or not error or record.get("expected"):
            continue  # a test that JAX raises (pytest.raises, assertRaises) is no finding
        message = f"{error.get('type')}: {error.get('message')}"
        places = [loc for loc in error.get("locations") or [] if loc.get("path")] or \
            [loc for loc in (record.get("launch"), record.get("body")) if loc][:1]
        for location in places:
            path = os.path.realpath(location["path"])
            span = sources.span(dict(location, path=path))
            key = (path, span.line, message)
            related = _related(result, record, sources)
            if key in found:
                old = found[key]
                extra = tuple(r for r in related if r not in old.related)[:1]
                found[key] = replace(old, related=old.related + extra) if len(old.related) < 6 else old
                continue
            found[key] = Finding(path, span, pal100_jax_error.CODE, pal100_jax_error.NAME, pal100_jax_error.SEVERITY,
                                 message, related, source="jax")
    for result in run.results:  # JAX raised in the entry's own code, before any launch
        where = result.location
        if result.outcome != "jax_error" or not where or not where.get("path"):
            continue
        path = os.path.realpath(where["path"])
        message = f"{result.type}: {result.message}"
        span = sources.span({"path": path, "line": where["line"]})
        related = (_entry_related(result.entry, sources,
                                  f"raised by JAX, before any kernel launch, in the entry point {result.entry.id}"),)
        found.setdefault((path, span.line, message), Finding(
            path, span, pal100_jax_error.CODE, pal100_jax_error.NAME, pal100_jax_error.SEVERITY, message, related,
            source="jax"))
    kept = []
    for finding in found.values():
        lines = sources.lines(finding.path) or []
        codes = noqa_codes(lines[finding.span.line]) if finding.span.line < len(lines) else None
        if codes is None or (codes and finding.code not in codes):
            kept.append(finding)
    return sorted(kept, key=Finding.sort_key)


def _related(result, record: dict, sources: _Sources) -> tuple[Related, ...]:
    related = []
    launch = record.get("launch")
    if launch and launch.get("path"):
        related.append(Related(launch["path"], sources.span({"path": launch["path"], "line": launch["line"]}),
                               f"the launch JAX rejected ({record.get('api')}, lowered for {record.get('platform')})"))
    related.append(_entry_related(result.entry, sources, f"reached from the entry point {result.entry.id}"))
    return tuple(related)


def _entry_related(entry, sources: _Sources, message: str) -> Related:
    """The entry point's line (its def or `if __name__`), as a related location."""
    lines = sources.lines(entry.path) or []
    text = lines[entry.line] if entry.line < len(lines) else ""
    return Related(entry.path, Span(entry.line, len(text) - len(text.lstrip()), entry.line, len(text)), message)


def merge(static: list[Finding], run: EntryRun, jax: list[Finding] | None = None,
          sources: _Sources | None = None, left_out: list | None = None) -> tuple[list[Finding], list[str]]:
    """The rules' findings and JAX's as one list, and a note for each finding left out or confirmed.
    `jax`: JAX's findings to add (default `jax_findings(run)`; pass [] where PAL100 is not selected);
    `left_out` gets (finding, why) for each rule's error JAX contradicts (the hover says why)."""
    sources = sources or _Sources()
    jax = jax_findings(run, sources) if jax is None else jax
    rejected: dict[tuple[str, int], dict] = {}
    accepted: dict[tuple[str, int], dict] = {}
    doubtful: set[tuple[str, int]] = set()  # a launch JAX could not judge, or only lowered for the host
    for _, record in run.launches():
        lines = _launch_lines(record, sources)
        verdict = record.get("verdict")
        if verdict == "rejected":
            rejected.update({key: record for key in lines})
        elif verdict == "ok" and record.get("platform") in DEVICE_PLATFORMS and _one_context(record):
            accepted.update({key: record for key in lines})
        else:
            doubtful.update(lines)
    for result in run.results:  # JAX raised in the entry's own code: a rule's finding there is confirmed
        where = result.location or {}
        if result.outcome == "jax_error" and where.get("path"):
            path = os.path.realpath(where["path"])
            pseudo = {"body": {"function": where.get("function"), "path": path, "line": where.get("line")},
                      "error": {"type": result.type}}
            rejected.update({(path, n): pseudo for n in sources.statement_lines(path, int(where["line"]))})
    merged, notes, confirmed_lines = [], [], {}
    for finding in static:
        key = (os.path.realpath(finding.path), finding.span.line + 1)
        if key in rejected:
            record = rejected[key]
            finding = replace(finding, message=finding.message + CONFIRMED, confirmed=True, severity="error")
            confirmed_lines.setdefault(key, []).append(finding)
            notes.append(f"{_at(finding)}: {finding.code} confirmed: JAX rejected the launch of "
                         f"{_body_name(record)} ({(record.get('error') or {}).get('type')})")
        elif key in accepted and key not in doubtful and finding.severity == "error":
            record = accepted[key]
            why = (f"JAX traced and lowered the launch of {_body_name(record)} for {record.get('platform')} "
                   f"({', '.join(record.get('args') or [])}) without error, from the entry point {record.get('entry')}")
            notes.append(f"{_at(finding)}: {finding.code} left out: JAX lowered the launch of {_body_name(record)} "
                         f"for {record.get('platform')} ({', '.join(record.get('args') or [])}), "
                         f"from the entry point {record.get('entry')}")
            if left_out is not None:
                left_out.append((finding, why))
            continue
        merged.append(finding)
    for finding in jax:
        same = confirmed_lines.get((finding.path, finding.span.line + 1), [])
        if same:
            continue  # the rule said it on this line already, now confirmed
        merged.append(finding)
    return sorted(merged, key=Finding.sort_key), notes


def _one_context(record: dict) -> bool:
    """The launch is the only kernel its body makes: built at module level (a decorator, an assignment)
    from a body that is no closure. A kernel built in a function (a factory, `pallas_call` in a
    wrapper) can be built differently by a call no entry point made, which a rule's finding may be
    about: JAX lowering one of them does not clear it."""
    built, body = record.get("built") or {}, record.get("body") or {}
    return built.get("function") == "<module>" and "<locals>" not in (body.get("function") or "")


def _at(finding: Finding) -> str:
    return f"{os.path.relpath(finding.path) if not os.path.relpath(finding.path).startswith('..') else finding.path}:" \
           f"{finding.span.line + 1}"


def _body_name(record: dict) -> str:
    body = record.get("body") or {}
    return f"{body.get('function') or 'a kernel'} ({os.path.basename(body.get('path') or '?')}:{body.get('line')})"
