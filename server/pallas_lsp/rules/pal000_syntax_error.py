"""PAL000 syntax-error: the file does not parse; the rest of it is still analysed."""

from __future__ import annotations

from ..analysis.findings import Finding, Span

CODE = "PAL000"
NAME = "syntax-error"
SEVERITY = "error"
SUMMARY = "The file does not parse; findings after the error may be missing."


def check(ctx):
    for problem in ctx.model.source.syntax_errors:
        line_text = ctx.model.source.lines[problem.line] if problem.line < len(ctx.model.source.lines) else ""
        column = min(problem.column, len(line_text))
        end = len(line_text) if column < len(line_text) else column
        yield Finding(ctx.path, Span(problem.line, column, problem.line, end), CODE, NAME, SEVERITY,
                      f"SyntaxError: {problem.message}")
