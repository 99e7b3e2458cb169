"""Fix: silence one finding with `# noqa: PALxxx`, merged into a noqa comment already on the line."""

from __future__ import annotations

import io
import re
import tokenize

from ..analysis.findings import Fix, Span, TextEdit
from ..analysis.source import noqa_codes
from .cst_locate import chunk_range, ranges_of

_NOQA_CODES = re.compile(r"(#\s*noqa:\s*[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*)", re.IGNORECASE)


def _comment_line(lines: list[str], first: int, line_index: int) -> bool:
    """True when a comment added at the end of this line is a real comment (not inside a string).
    Only the statement's own lines (from `first`) are tokenized, not the whole file."""
    text = "\n".join(lines[first:line_index + 1]) + "\n"
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT and token.start[0] - 1 == line_index - first and "noqa" in token.string:
                return True
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return False  # the line ends inside a bracket: the comment is still a comment if it tokenized
    return False


def fix(model, span: Span, code: str) -> Fix | None:
    path, lines = model.path, model.source.lines
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
        found = chunk_range(ranges_of(model), index)  # tokenizing can start at the statement's first line
        first = found[0] if found else 0
        if _comment_line([*lines[:index], new_line], first, index):
            return Fix(f"pallas-lsp ({code}): Disable {code} for this line", (edit,), "safe", False, "noqa")
    return None
