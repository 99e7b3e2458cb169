"""Fix: silence one finding with `# noqa: PALxxx`, merged into a noqa comment already on the line."""

from __future__ import annotations

import io
import re
import tokenize

from ..analysis.findings import Fix, Span, TextEdit
from ..analysis.source import noqa_codes

_NOQA_CODES = re.compile(r"(#\s*noqa:\s*[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*)", re.IGNORECASE)


def _comment_line(text: str, line_index: int) -> bool:
    """True when a comment added at the end of this line is a real comment (not inside a string)."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT and token.start[0] - 1 == line_index and "noqa" in token.string:
                return True
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return False
    return False


def fix(path: str, text: str, span: Span, code: str) -> Fix | None:
    lines = text.splitlines()
    for index in dict.fromkeys((span.line, span.end_line)):
        if index >= len(lines):
            continue
        line = lines[index]
        if line.rstrip().endswith("\\"):
            continue
        codes = noqa_codes(line)
        if codes is not None and (not codes or code in codes):
            return None  # already silenced
        match = _NOQA_CODES.search(line) if codes else None
        if match:
            edit = TextEdit(path, Span(index, match.end(), index, match.end()), f", {code}")
        else:
            stripped = len(line.rstrip())
            edit = TextEdit(path, Span(index, stripped, index, len(line)), f"  # noqa: {code}")
        new_line = line[:edit.span.column] + edit.new_text + line[edit.span.end_column:]
        new_text = "\n".join([*lines[:index], new_line, *lines[index + 1:]])
        if _comment_line(new_text, index):
            return Fix(f"pallas-lsp ({code}): Disable {code} for this line", (edit,), "safe", False, "noqa")
    return None
