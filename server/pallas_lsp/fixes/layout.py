"""Fixed code a person would keep: a line a fix made too long is broken inside its brackets, in the
file's own style, at the project's line length (`[tool.ruff] line-length`, else black's, else 88).

Two styles, whichever the file already uses more: black's hanging indent (`call(` at the end of
the line, the arguments indented one level below, the closing bracket back at the line's indent)
or arguments aligned with the opening bracket (JAX's own style). Only lines the fix changed are
touched; a line that cannot be broken stays as it is (a long line beats no fix), and so does a
line over LONGEST_TOKENIZED characters.
"""

from __future__ import annotations

import logging
import os
import reprlib
import tokenize
from functools import lru_cache

from ..source_text import Token, tokens

log = logging.getLogger(__name__)

DEFAULT_LINE_LENGTH = 88
MAX_LINE_LENGTH = 320  # ruff's own bounds: 1 to 320
_OPEN, _CLOSE = "([{", ")]}"


@lru_cache(maxsize=64)
def _line_length_in(folder: str) -> int:
    """The line length ruff's, else black's, settings give; a value neither tool would take (`true`
    is an int to Python, so it wrapped every fix at one column) is said once and passed over."""
    from ..config import ConfigError, find_pyproject, read_pyproject
    from ..private_files import warn_once

    pyproject = find_pyproject(folder)
    try:
        data = read_pyproject(pyproject) if pyproject is not None else None
    except ConfigError:  # the settings' own reading says it
        data = None
    tool = data.get("tool") if data else None
    for section in ("ruff", "black") if isinstance(tool, dict) else ():
        table = tool.get(section, {})
        if not isinstance(table, dict):
            warn_once(f"{pyproject}: [tool] {section} = {_toml(table)} is ignored: it must be a table", log)
            continue
        value = table.get("line-length")
        if type(value) is int and 1 <= value <= MAX_LINE_LENGTH:
            return value
        if value is not None:
            warn_once(f"{pyproject}: [tool.{section}] line-length = {_toml(value)} is ignored: a line "
                      f"length is a whole number from 1 to {MAX_LINE_LENGTH}", log)
    return DEFAULT_LINE_LENGTH


def _toml(value) -> str:
    """A value as TOML writes it (`true`, not Python's `True`), shortened."""
    return str(value).lower() if isinstance(value, bool) else reprlib.repr(value)


def line_length(path: str) -> int:
    return _line_length_in(os.path.dirname(os.path.abspath(path)))


# Lines longer than this are never tokenized: on Python 3.12.0 to 3.12.3 a line of n tokens costs n
# copies of itself (source_text.Token), its length squared in time.
LONGEST_TOKENIZED = 1000


def style_of(text: str, statements: list[tuple[int, int]] | None = None) -> str:
    """"hanging" (black) or "aligned": how the file breaks its calls already (hanging if it never does).

    With `statements` (0-based first and last lines of the top-level statements), a file with a
    line over LONGEST_TOKENIZED is read statement by statement, without those holding such lines."""
    lines = text.split("\n")
    pieces = [text]
    if statements is not None and any(len(line) > LONGEST_TOKENIZED for line in lines):
        pieces = ["\n".join(lines[first:last + 1]) + "\n" for first, last in statements
                  if all(len(line) <= LONGEST_TOKENIZED for line in lines[first:last + 1])]
    hanging = aligned = 0
    for piece in pieces:
        try:
            votes = _votes(piece, lines if piece is text else piece.split("\n"))
        except (tokenize.TokenError, IndentationError, SyntaxError):
            return "hanging"
        hanging, aligned = hanging + votes[0], aligned + votes[1]
    return "aligned" if aligned > hanging else "hanging"


def _votes(text: str, lines: list[str]) -> tuple[int, int]:
    """(hanging, aligned): brackets that end their line, brackets whose next line starts under their inside."""
    hanging = aligned = 0
    stack: list[Token] = []
    waiting: tuple[Token, Token] | None = None  # an opener and the line break after it, for the next token
    for token in tokens(text):
        if waiting is not None:
            opener, newline = waiting
            waiting = None
            if opener.end == (newline.start[0], len(lines[newline.start[0] - 1].rstrip())):
                hanging += 1
            elif token.start[1] == opener.end[1]:
                aligned += 1
        if token.type == tokenize.OP and token.string in _OPEN:
            stack.append(token)
        elif token.type == tokenize.OP and token.string in _CLOSE and stack:
            stack.pop()
        elif token.type == tokenize.NL and stack and stack[-1].end[0] == token.start[0]:
            waiting = (stack[-1], token)
    return hanging, aligned


def indent_unit(text: str) -> str:
    """The file's indentation step (two spaces in JAX's style, four in black's)."""
    widths = {len(line) - len(line.lstrip(" ")) for line in text.splitlines() if line.startswith(" ") and line.strip()}
    return " " * (min(widths) if widths and min(widths) in (2, 4) else 4)


def _split_once(line: str, limit: int, style: str, unit: str = "    ", inside: bool = False) -> list[str] | None:
    """The line broken at its own top-level commas if it continues a bracket opened above (`inside`, or a
    closer it does not open; each piece at the line's indent), else inside its first bracket with commas;
    None if it cannot be."""
    if len(line) > LONGEST_TOKENIZED:
        return None
    try:
        line_tokens = list(tokens(line if line.endswith("\n") else line + "\n"))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    stack, pairs, outer_commas, continues = [], [], [], False
    for token in line_tokens:
        if token.type == tokenize.OP and token.string in _OPEN:
            stack.append((token, []))
        elif token.type == tokenize.OP and token.string == ",":
            (stack[-1][1] if stack else outer_commas).append(token)
        elif token.type == tokenize.OP and token.string in _CLOSE:
            if stack:
                opener, commas = stack.pop()
                pairs.append((opener, token, commas))
            else:
                continues = True
    pairs.sort(key=lambda pair: pair[0].start[1])
    continues = continues or inside
    indent = line[:len(line) - len(line.lstrip())]
    if continues and outer_commas:
        cuts = [c.end[1] for c in outer_commas]
        pieces, start = [], 0
        for cut in cuts:
            if len(line[start:cut]) + (len(indent) if start else 0) > 0:
                pieces.append((indent if start else "") + line[start:cut].strip() if start else line[:cut].rstrip())
            start = cut
        pieces.append(indent + line[start:].strip())
        pieces = [piece for piece in pieces if piece.strip()]  # a trailing comma leaves nothing after it
        merged = [pieces[0]]
        for piece in pieces[1:]:  # keep what fits on one line together
            if len(merged[-1]) + 1 + len(piece.strip()) <= limit:
                merged[-1] = merged[-1] + " " + piece.strip()
            else:
                merged.append(piece)
        if len(merged) > 1:
            return merged
    for opener, closer, commas in pairs:
        start, end = opener.end[1], closer.start[1]
        if not commas or end - start < 2:
            continue
        bounds = [start, *(n for c in commas for n in (c.start[1], c.end[1])), end]
        items = [line[a:b].strip() for a, b in zip(bounds[::2], bounds[1::2])]
        items = [item for item in items if item]
        if len(items) < 2:
            continue  # `(2,)`: one item, nothing to put on lines of its own
        trailing = line[start:end].rstrip().endswith(",")
        head, tail = line[:start], line[end:].rstrip("\n")
        if style == "aligned":
            column = " " * start
            pieces, current = [], head
            for number, item in enumerate(items):
                text = item + ("," if number < len(items) - 1 or trailing else "")
                if current.strip() and current != head and len(current) + 1 + len(text) > limit:
                    pieces.append(current.rstrip())
                    current = column + text
                else:
                    current = current + ("" if current == head else " ") + text
            pieces.append(current + tail)
        else:
            inner = indent + unit
            joined = inner + ", ".join(items)
            if len(joined) <= limit and not trailing:
                body = [joined]
            else:
                body = [inner + item + "," for item in items]
            pieces = [head.rstrip(), *body, indent + tail.lstrip()]
        if len(pieces) > 1 and max(len(p) for p in pieces) < len(line.rstrip("\n")):
            return pieces
    if style == "hanging" and not continues:
        return _split_last_bracket(line, pairs, indent, unit)
    return None


def _split_last_bracket(line: str, pairs: list, indent: str, unit: str) -> list[str] | None:
    """Black's right-hand split where no bracket has commas: `x = f(a).at[` / `    index` / `]`."""
    depth_zero = [(o, c) for o, c, _ in pairs if not any(
        other.start[1] < o.start[1] and c.end[1] <= closer.start[1] for other, closer, _ in pairs)]
    if not depth_zero:
        return None
    opener, closer = max(depth_zero, key=lambda pair: pair[0].start[1])
    start, end = opener.end[1], closer.start[1]
    inner = line[start:end].strip()
    if not inner or line[:start].strip() in "([{":
        return None
    pieces = [line[:start].rstrip(), indent + unit + inner, indent + line[end:].rstrip("\n").lstrip()]
    return pieces if max(len(p) for p in pieces) < len(line.rstrip("\n")) else None


def wrap_long_lines(old: str, new: str, limit: int, style: str, unit: str = "    ") -> str:
    """`new` with each line over `limit` that is not in `old` broken inside its brackets."""
    kept = set(old.splitlines())
    inside, spanned = _lines_in_brackets(new)
    out = []
    for number, line in enumerate(new.splitlines(keepends=True)):
        if number in spanned:
            out.append(line)
            continue
        ending = line[len(line.rstrip("\r\n")):]
        body = line[:len(line) - len(ending)]
        pending, done = [body], []
        for _ in range(8):  # each split shortens the longest piece; a few are enough
            if not pending:
                break
            piece = pending.pop(0)
            if len(piece) <= limit or piece in kept or "#" in piece:
                done.append(piece)
                continue
            split = _split_once(piece, limit, style, unit, inside=number in inside)
            if split is None:
                done.append(piece)
                continue
            pending = [*split, *pending]
        done.extend(pending)
        out.append((ending or "\n").join(done) + ending)
    return "".join(out)


def _lines_in_brackets(text: str) -> tuple[set[int], set[int]]:
    """The lines (0-based) that begin inside a bracket opened on a line above (`a, b` there is a call's
    arguments, broken at its commas, not a tuple), and those a token spans with others (a triple-quoted
    string's: never broken)."""
    if any(len(line) > LONGEST_TOKENIZED for line in text.splitlines()):
        return set(), set()
    inside, spanned, depth, line = set(), set(), 0, 0
    try:
        for token in tokens(text):
            if token.start[0] - 1 > line:
                if depth:
                    inside.update(range(line + 1, token.start[0]))
                line = token.start[0] - 1
            if token.end[0] > token.start[0]:
                spanned.update(range(token.start[0] - 1, token.end[0]))
            if token.type == tokenize.OP and token.string in _OPEN:
                depth += 1
            elif token.type == tokenize.OP and token.string in _CLOSE:
                depth = max(depth - 1, 0)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return set(), set()
    return inside, spanned
