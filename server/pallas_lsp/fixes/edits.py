"""Turning a rewritten file into small text edits, and applying edits to text.

A fix rewrites whole statements (LibCST keeps everything it does not touch); editors want edits
that cover only what changed, so unchanged lines and the common start and end of changed runs
are left out.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from ..analysis import big_literals
from ..analysis.findings import Span, TextEdit
from ..source_text import LINE_BREAK, split_lines_keepends


def _line_starts(text: str) -> list[int]:
    """Offsets where lines start, lines ending at `\n`, `\r\n` or `\r` as the core counts them."""
    return [0] + [match.end() for match in LINE_BREAK.finditer(text)]


def newline_of(lines: list[str]) -> str:
    """The line ending new lines get: the file's first one (`\\n` for a file of one line)."""
    return next((line[len(line.rstrip("\r\n")):] for line in lines if line.endswith(("\n", "\r"))), "\n")


def position(starts: list[int], offset: int) -> tuple[int, int]:
    line = max(0, _bisect(starts, offset))
    return line, offset - starts[line]


def _bisect(starts: list[int], offset: int) -> int:
    low, high = 0, len(starts) - 1
    while low < high:
        middle = (low + high + 1) // 2
        if starts[middle] <= offset:
            low = middle
        else:
            high = middle - 1
    return low


def offset(starts: list[int], text: str, line: int, column: int) -> int:
    if line >= len(starts):
        return len(text)
    end = len(text)
    if line + 1 < len(starts):  # before the line's own ending
        end = starts[line + 1] - (2 if text.startswith("\r\n", starts[line + 1] - 2) else 1)
    return min(starts[line] + column, end)


def minimal_edits(path: str, old: str, new: str) -> tuple[TextEdit, ...]:
    """Edits that turn `old` into `new`: one per changed run of lines, trimmed to the changed characters."""
    if old == new:
        return ()
    old_lines, new_lines = split_lines_keepends(old), split_lines_keepends(new)
    old_starts = [0]
    for line in old_lines:
        old_starts.append(old_starts[-1] + len(line))
    new_starts = [0]
    for line in new_lines:
        new_starts.append(new_starts[-1] + len(line))
    positions = _line_starts(old)
    edits = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        start, end = old_starts[i1], old_starts[i2]
        replacement = new[new_starts[j1]:new_starts[j2]]
        original = old[start:end]
        prefix = 0
        while prefix < min(len(original), len(replacement)) and original[prefix] == replacement[prefix]:
            prefix += 1
        suffix = 0
        while (suffix < min(len(original), len(replacement)) - prefix
               and original[len(original) - 1 - suffix] == replacement[len(replacement) - 1 - suffix]):
            suffix += 1
        start_line, start_column = position(positions, start + prefix)
        end_line, end_column = position(positions, end - suffix)
        edits.append(TextEdit(path, Span(start_line, start_column, end_line, end_column),
                              replacement[prefix:len(replacement) - suffix]))
    return tuple(edits)


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """Apply non-overlapping edits of one file (any order) to its text."""
    starts = _line_starts(text)
    spans = sorted(((offset(starts, text, e.span.line, e.span.column),
                     offset(starts, text, e.span.end_line, e.span.end_column), e.new_text) for e in edits),
                   reverse=True)
    previous_start = len(text) + 1
    for start, end, new_text in spans:
        if end > previous_start:
            raise ValueError("overlapping edits")
        text = text[:start] + new_text + text[end:]
        previous_start = start
    return text


def into_elided(text: str, edits: Iterable[TextEdit]) -> bool:
    """Does an edit of `text` change the inside of a big data literal (`big_literals`)? The trees a fix is
    built from do not hold it: an edit placed by them there would write into numbers it never saw."""
    regions = big_literals.regions(text)
    if not regions:
        return False
    starts = _line_starts(text)
    for edit in edits:
        start = offset(starts, text, edit.span.line, edit.span.column)
        end = offset(starts, text, edit.span.end_line, edit.span.end_column)
        for region in regions:
            if start < region.end and end > region.start + 1 or start == end and region.start < start < region.end:
                return True
    return False


def parses(text: str) -> bool:
    try:
        big_literals.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True
