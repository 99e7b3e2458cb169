"""A notebook's JSON read with Python's `json`, without what `json` accepts beyond JSON or what makes it
cost far more than the file's size.

`json.loads` reads `NaN` and `-Infinity` (not JSON: no other notebook tool reads them), raises
ValueError for an integer over Python's digit limit and RecursionError for nesting past its own, and
keeps every value it reads: a 10 MB list of `{}` became 290 MB of objects (a 95 MB one, 2.4 GB),
while a realistic notebook's bulk is a few long strings (images, outputs) that cost their size. So
before parsing, one C-speed pass counts the values outside strings and refuses absurd counts
(`NotebookOverLimit`: the file is skipped, as an oversized one is); JSON that Python will not read
(NaN, a 5,000-digit integer, nesting past Python's recursion limit) is a `NotebookError` (a PAL000
finding) that says where. Nothing below walks the JSON in Python, so nesting Python reads costs
nothing more.
"""

from __future__ import annotations

import json
import re
import sys
from itertools import chain

# A notebook of a thousand cells with long outputs holds tens of thousands of values; a plotly figure
# of 100,000 points a few hundred thousand. Over this, a notebook is not analysed (and said so).
MAX_NOTEBOOK_VALUES = 1_000_000
# Each cell costs some Python (its place in the JSON text, its lines in the module): 300,000 empty
# cells took 8 s. Long notebooks have hundreds.
MAX_NOTEBOOK_CELLS = 20_000

# A JSON string, or an unterminated one up to the end: it never fails from a `"`, so the pass is linear.
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)'
_STRINGS = re.compile(_STRING, re.S)


class NotebookError(ValueError):
    """Not a notebook pallas-lsp can read; `line`/`column` (0-based) say where in the file's text."""

    def __init__(self, message: str, line: int = 0, column: int = 0):
        super().__init__(message)
        self.message, self.line, self.column = message, line, column


class NotebookOverLimit(NotebookError):
    """Valid JSON, but more values or deeper nesting than a notebook has: not analysed, as a file
    over the size limit is not."""


class _NotJson(ValueError):
    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


def _refuse_constant(name: str):
    raise _NotJson(name)


def check_cell_count(cells: list) -> None:
    if len(cells) > MAX_NOTEBOOK_CELLS:
        raise NotebookOverLimit(f"a notebook of {len(cells):,} cells, over the {MAX_NOTEBOOK_CELLS:,} limit for "
                                "analysed notebooks")


def line_column(raw: str, offset: int) -> tuple[int, int]:
    line = raw.count("\n", 0, offset)
    return line, offset - (raw.rfind("\n", 0, offset) + 1)


def _outside_strings(raw: str, token: str) -> re.Match | None:
    """The first `token` outside the strings of `raw` (a loop over strings: only on the way to an error)."""
    for match in re.compile(f"{_STRING}|(?P<hit>{token})", re.S).finditer(raw):
        if match.group("hit") is not None:
            return match
    return None


def _values_in(text: str, start: int = 0, end: int | None = None) -> int:
    """Values begun in JSON text without strings: one per comma, one per non-empty `[` or `{`."""
    count = text.count
    return count(",", start, end) + count("[", start, end) + count("{", start, end) - count("[]", start, end) \
        - count("{}", start, end)


def _measure(raw: str) -> None:
    """NotebookOverLimit for JSON that would build more values than the limit. Counted over the whole
    text first (strings included: an upper bound, enough for a notebook of images and code); only
    over the limit, again between one string and the next (C-speed counts, no copies of the text: a
    regular expression's `sub` keeps a piece per match, 270 MB for 20 MB of `"ab", `). That loop
    stops at the limit, so it runs at most that many times whatever the file's size."""
    if _values_in(raw) <= MAX_NOTEBOOK_VALUES:
        return
    values, end, gaps = 1, 0, {}  # gaps: the short texts between strings (`, `, `": `) repeat
    for match in chain(_STRINGS.finditer(raw), (None,)):
        start = match.start() if match is not None else len(raw)
        if start - end < 16:
            gap = raw[end:start]
            found = gaps.get(gap)
            if found is None:
                found = gaps[gap] = _values_in(gap)
            values += found
        else:
            values += _values_in(raw, end, start)
        if values > MAX_NOTEBOOK_VALUES:
            raise NotebookOverLimit(f"a notebook of over {MAX_NOTEBOOK_VALUES:,} JSON values, the limit for "
                                    "analysed notebooks")
        if match is not None:
            end = match.end()


def load(raw: str):
    """The JSON document in `raw`, as `json.loads` reads it; NotebookError when it is none Python reads
    as JSON, NotebookOverLimit when it is too big a one (see `_measure`)."""
    _measure(raw)
    try:
        return json.loads(raw, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"not valid JSON: {exc.msg}", exc.lineno - 1, exc.colno - 1) from None
    except _NotJson as exc:
        found = _outside_strings(raw, re.escape(exc.name))
        raise NotebookError(f"not valid JSON: {exc.name} is not a JSON number",
                            *line_column(raw, found.start() if found else 0)) from None
    except ValueError as exc:  # an integer of more digits than Python converts (`sys.set_int_max_str_digits`)
        limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
        found = _outside_strings(raw, rf"-?\d{{{limit + 1},}}") if limit else None
        if found is None:
            raise NotebookError(f"not valid JSON for Python: {exc}") from None
        raise NotebookError(f"not valid JSON for Python: an integer of {len(found.group().lstrip('-')):,} "
                            f"digits (Python reads at most {limit:,})", *line_column(raw, found.start())) from None
    except RecursionError:
        raise NotebookError("not valid JSON: nested too deeply") from None


_SCANNER = json.JSONDecoder().scan_once


def value_end(raw: str, i: int) -> int:
    """The end of the JSON value at `i` of a text `load` read: found by `json`'s C scanner (a walk in
    Python took minutes over a value of millions of tiny ones, and recursed on deep ones)."""
    return _SCANNER(raw, i)[1]
