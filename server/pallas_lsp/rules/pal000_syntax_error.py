"""PAL000 syntax-error: the file does not parse; the rest of it is still analysed."""

from __future__ import annotations

import sys

from ..analysis.findings import Finding, Span

CODE = "PAL000"
NAME = "syntax-error"
SEVERITY = "error"
SUMMARY = "The file does not parse; findings after the error may be missing."


def _newer_python_note(ctx) -> str:
    """The analysed environment may accept syntax this interpreter (running pallas-lsp) does not."""
    if not ctx.project.use_jedi:
        return ""
    try:
        analysed = tuple(ctx.project.environment.jedi_env.version_info[:2])
    except Exception:  # the environment is reported elsewhere; the syntax error stands on its own
        return ""
    if analysed > sys.version_info[:2]:
        running = ".".join(map(str, sys.version_info[:2]))
        return (f" (pallas-lsp runs on Python {running} but the project uses {analysed[0]}.{analysed[1]}: "
                "newer syntax is reported as an error; run pallas-lsp under the newer Python)")
    return ""


def check(ctx):
    for problem in ctx.model.source.syntax_errors:
        line_text = ctx.model.source.lines[problem.line] if problem.line < len(ctx.model.source.lines) else ""
        column = min(problem.column, len(line_text))
        if problem.end_line is not None:  # known exactly: a refused cookie's codec, a NUL byte, a string
            span = Span(problem.line, column, problem.end_line, problem.end_column)
        else:
            span = Span(problem.line, column, problem.line, len(line_text) if column < len(line_text) else column)
        yield Finding(ctx.path, span, CODE, NAME, SEVERITY, f"SyntaxError: {problem.message}{_newer_python_note(ctx)}")
