"""Big data literals parsed as what the analysis makes of them: a value it does not know.

`DATA = [1, 1, ...]` on a line of 1 MB is a syntax tree of 333,000 nodes (about 450 bytes each: 360 MiB
for the analysis, twice that while a fix is checked), and no rule reads one of them: a value of more
than MAX_ITEMS values is unknown (`arithmetic.bounded`). So before `ast.parse`, the contents of such a
display (a list, tuple, set or dict of only numbers, strings, None, True and False, nested or not) are
replaced by `*...` (`**...` in a dict) and spaces of the same UTF-8 length, line breaks kept: every
position outside it is the same, and `[*...]` is unknown to the evaluator too. The literal's own
brackets stay, so its node spans what it spans in the file.

Only displays on or just above a line of LONG_LINE characters or more are looked for (a cheap regex
finds none in ordinary code), by a scanner that accepts a subset of Python's tokens exactly. Each one
replaced is then checked on the tree: a display node exactly there, holding exactly the `*...`, in a
place where nothing reads its elements one by one (an assignment's value, a call's argument, an item of
another display, ...). Any doubt (a display in a string, a loop's iterable, an unpacking's value, a text
that no longer parses) puts the original text back, so the tree says what Python says: a text that does
not parse is parsed as it is, for its own syntax error.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
import threading
import warnings
from bisect import bisect_right
from collections import OrderedDict
from dataclasses import dataclass

# `arithmetic.MAX_ITEMS` (not imported: arithmetic's values lead back to the model, which parses with this):
# a value holding more is unknown.
MAX_ITEMS = 4_096
LONG_LINE = 8_192  # characters: a shorter line cannot hold more than MAX_ITEMS values (`1,` is two)
ABOVE = 4_096  # characters before a long line searched for the display's opening bracket
MAX_DEPTH = 32  # displays nested deeper are left alone (far from Python's 200 levels)
MAX_UNARY = 8  # `- - 1`: longer chains are left alone (far from the parser's recursion limit)
MAX_PLACE_DEPTH = 64  # ancestors of a replaced display in the tree, at most (likewise)
MAX_RETRIES = 8  # parses with a doubtful display put back, at most; then the rest are put back too

_LONG = re.compile(r"(?<![^\r\n])[^\r\n]{%d}" % LONG_LINE)  # tried at line starts only: linear

# Every unbounded repetition is possessive: a greedy one keeps a backtracking record per repeat while it
# matches (a run of 52,000 strings: 180 MiB), a possessive one none.
_PLAIN_SPACE = r"[ \t\f\r\n]*+"
_DIGITS = r"[0-9](?:_?[0-9])*+"
_EXPONENT = r"[eE][-+]?" + _DIGITS
_POINT_FLOAT = rf"(?:{_DIGITS}\.(?:{_DIGITS})?|\.{_DIGITS})(?:{_EXPONENT})?"
_FLOAT = rf"(?:{_POINT_FLOAT}|{_DIGITS}{_EXPONENT})"
_INT = r"(?:0[xX](?:_?[0-9a-fA-F])++|0[bB](?:_?[01])++|0[oO](?:_?[0-7])++|0(?:_?0)*+|[1-9](?:_?[0-9])*+)"
# tokenize's Number; then no word character or dot (`1abc`, `0777`, `1..` are not numbers)
_NUMBER = rf"(?>{_INT}(?![\w.])|(?:{_DIGITS}[jJ]|{_FLOAT}[jJ]|{_FLOAT})(?![\w.]))"
# Escapes that can make a string a syntax error (`\N{...}`, a short `\x`, `\u`, `\U`) are accepted only
# in the forms that cannot; no line continuation, no triple quotes.
_ESCAPE = r"\\(?:[^\r\nxuUN]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U(?:000[0-9a-fA-F]|0010)[0-9a-fA-F]{4})"
_BYTES_ESCAPE = r"\\(?:(?![xuUN])[\x01-\x09\x0b\x0c\x0e-\x7f]|x[0-9a-fA-F]{2})"


def _quoted(text: bool) -> str:
    """A string in single or double quotes: of any characters, or of ASCII only (bytes)."""
    forms = []
    for quote, code in (("'", 0x27), ('"', 0x22)):
        if text:
            body, escape = rf"[^{quote}\\\r\n]", _ESCAPE
        else:
            body, escape = rf"[\x01-\x09\x0b\x0c\x0e-\x{code - 1:02x}\x{code + 1:02x}-\x5b\x5d-\x7f]", _BYTES_ESCAPE
        forms.append(rf"(?!{quote * 3}){quote}(?:{body}++|{escape})*+{quote}")
    return "(?>" + "|".join(forms) + ")"


_NAMED = r"(?:None|True|False)(?!\w)"
_UNARY = "[-+~]"
_SIGNED = rf"(?>(?:{_UNARY}{_PLAIN_SPACE}){{0,{MAX_UNARY}}}+{_NUMBER}{_PLAIN_SPACE})"
# Many numbers at a time, each followed by a comma (no comment between: its commas would be counted).
_FLAT = rf"(?:{_SIGNED},{_PLAIN_SPACE})++"
# A list or tuple of numbers at a time (a matrix's row), and the comma after it.
_NUMBERS = rf"{_PLAIN_SPACE}(?:{_SIGNED}(?:,{_PLAIN_SPACE}{_SIGNED})*+(?:,{_PLAIN_SPACE})?)?"
_ROW = rf"(?>\[{_NUMBERS}\]|\({_NUMBERS}\)){_PLAIN_SPACE}(?:,{_PLAIN_SPACE})?"
_TEXT = rf"[rRuU]?{_quoted(True)}"
_BYTES = rf"(?:[bB][rR]?|[rR][bB]){_quoted(False)}"
# Strings written one after the other are one value: those with only blanks between at a time, the others
# (a comment between) kept together by `_step`.
_TAIL = rf"|(?P<atom>{_NUMBER}|{_NAMED})|(?P<text>{_TEXT}(?:{_PLAIN_SPACE}{_TEXT})*+)" \
        rf"|(?P<bytes>{_BYTES}(?:{_PLAIN_SPACE}{_BYTES})*+)|(?P<unary>{_UNARY})|(?P<open>[\[({{])" \
        rf"|(?P<close>[\])}}])|(?P<comma>,)|(?P<colon>:(?!=))|(?P<space>(?:[ \t\f\r\n]++|#[^\r\n]*+)++)"
# Possessive repeats and atomic groups (linear scans) need Python 3.11; 3.10 elides nothing.
SUPPORTED = sys.version_info >= (3, 11)


@functools.cache
def _token_patterns() -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    """(item in a list or tuple, in a set or dict (a flat run could be a key and value), after an item
    or outside any display): compiled when a file first has a long line, not at every start (they
    were a third of the CPU of importing the analysis)."""
    return (re.compile(rf"(?P<flat>{_FLAT})|(?P<row>{_ROW}){_TAIL}"), re.compile(rf"(?P<row>{_ROW}){_TAIL}"),
            re.compile(_TAIL[1:]))


_OTHER = re.compile(r"\w+|.", re.S)  # a name, or any other character: not data

_CLOSING = {"[": "]", "(": ")", "{": "}"}
_FULL = MAX_ITEMS + 1  # the most `arithmetic.size` counts in a value it keeps (the value itself and those it holds)


@dataclass(frozen=True)
class Region:
    """A display's brackets at offsets `start` and `end` (the closing one) of the text; `kind`: "[",
    "(" (a tuple), "{" (a set) or ":" (a dict)."""

    start: int
    end: int
    kind: str


class _Frame:
    """An open display while scanning: what it holds so far and what may come next."""

    __slots__ = ("kind", "start", "count", "items", "comma", "state", "unary", "mode", "key", "first", "negated",
                 "string")

    def __init__(self, kind: str, start: int, negated: bool):
        self.kind, self.start, self.negated = kind, start, negated
        self.count = 0  # what `arithmetic.size` counts of the values held (a dict's: its values)
        self.items = 0
        self.comma = False
        self.state = 0  # 0: an item or the end may come; 1: an item must; 2: after an item
        self.unary = 0
        self.mode = None  # of "{": "set" or "dict" once known
        self.key = False  # a dict's key read, its colon not yet
        self.first = 0  # a "{"'s first item's count, until its mode is known
        self.string = None  # "text" or "bytes": the item just read is a string (another may follow it)

    def item(self, count: int) -> bool:
        """An item ends (counting `count`); False where none may."""
        if self.state == 2:
            return False
        if self.unary:
            count, self.unary = 1, 0  # `-x` is a number or unknown: one value
        self.items += 1
        self.state = 2
        if self.kind != "{":
            self.count += count
        elif self.mode is None:
            self.first = count
        elif self.mode == "dict":
            if self.key:
                self.key = False
                self.count += count
            else:
                self.key = True
        else:
            self.count += count
        return True


_KEPT: OrderedDict[str, list[Region]] = OrderedDict()  # a fix parses the file's text and the fixed one several times
_KEEP = 2
_KEPT_LOCK = threading.Lock()


def regions(text: str) -> list[Region]:
    """The displays of more than MAX_ITEMS values found on or just above the text's long lines,
    outermost only (not yet checked on a tree: see `parse`)."""
    if not SUPPORTED or _LONG.search(text) is None:
        return []
    with _KEPT_LOCK:
        found = _KEPT.get(text)
    if found is None:
        found = _regions(text)
    with _KEPT_LOCK:
        _KEPT[text] = found
        _KEPT.move_to_end(text)
        while len(_KEPT) > _KEEP:
            _KEPT.popitem(last=False)
    return list(found)


def _regions(text: str) -> list[Region]:
    found: list[Region] = []
    scanned = 0
    for match in _LONG.finditer(text):
        if match.start() < scanned:
            continue
        start = max(scanned, match.start() - ABOVE)
        if start > 0:
            start = max(text.rfind("\n", 0, start), text.rfind("\r", 0, start)) + 1
            start = max(start, scanned)
        line_end = _BREAKS.search(text, match.end())
        scanned = _scan(text, start, line_end.start() if line_end else len(text), found)
    found.sort(key=lambda r: r.start)
    outermost: list[Region] = []
    for region in found:
        if not outermost or region.start > outermost[-1].end:
            outermost.append(region)
    return outermost


def _scan(text: str, at: int, line_end: int, found: list[Region]) -> int:
    """Scan from `at` past `line_end` until no display is open; record the big ones; the offset reached."""
    stack: list[_Frame] = []
    size = len(text)
    item, row_item, other = _token_patterns()
    while at < size and (at < line_end or stack):
        top = stack[-1] if stack else None
        pattern = other if top is None or top.state == 2 else item if top.kind != "{" else row_item
        match = pattern.match(text, at)
        if match is None:
            stack.clear()
            at = _OTHER.match(text, at).end()
            continue
        at = match.end()
        kind = match.lastgroup
        if kind == "space" or top is None and kind != "open":
            continue
        if not _step(stack, top, kind, match, found):
            stack.clear()
    return at


def _step(stack: list[_Frame], top: _Frame | None, kind: str, match: re.Match, found: list[Region]) -> bool:
    """One token inside displays (or the opening of one); False where it is not data."""
    if top is not None:
        string, top.string = top.string, None
    if kind in ("text", "bytes"):
        if top.state == 2 and string is not None:  # `"a" "b"` is one value; `"a" b"b"` Python refuses
            top.string = kind
            return string == kind
        top.string = kind
        return top.item(1)
    if kind == "open":
        if top is not None and top.state == 2 or len(stack) >= MAX_DEPTH:
            return False
        stack.append(_Frame(match.group(), match.start(), negated=top is not None and top.unary > 0))
        return True
    if kind == "flat":  # numbers, each one value (a pending `-` makes the first one no more)
        commas = match.group().count(",")
        top.count += commas
        top.items += commas
        top.unary = 0
        top.comma = True
        top.state = 0
        return True
    if kind == "atom":
        return top.item(1)
    if kind == "row":
        return _row(top, match, found)
    if kind == "unary":
        if top.state == 2:
            return False
        top.unary += 1
        top.state = 1
        return top.unary <= MAX_UNARY
    if kind == "comma":
        return _step_comma(top)
    if kind == "colon":
        if top.kind != "{" or top.state != 2 or top.mode == "set":
            return False
        if top.mode is None:
            if top.items != 1:
                return False
            top.mode, top.key = "dict", True
        if not top.key:
            return False
        top.state = 1
        return True
    # close
    if _CLOSING[top.kind] != match.group() or top.state == 1 or top.key:
        return False
    stack.pop()
    if top.kind == "{" and top.mode is None and top.items == 1:
        top.mode = "set"
        top.count += top.first
    own, region_kind = top.count + 1, top.kind
    if top.kind == "(" and not top.comma:
        if top.items == 1:  # `(x)` is x
            return _closed(stack, top.count)
        region_kind = None  # `()`
    if top.kind == "{":
        region_kind = ":" if top.mode != "set" else "{"
    if region_kind is not None and own > _FULL and not top.negated:
        found.append(Region(top.start, match.start(), region_kind))
    # In what holds it: a list or tuple as `size` counts it (one unknown value past the bound); a set
    # or dict as one value (unknown for a set, and for a dict whose keys are not all constants).
    return _closed(stack, own if top.kind in "[(" and own <= _FULL else 1)


def _step_comma(top: _Frame) -> bool:
    if top.state != 2 or top.key:
        return False
    if top.kind == "{" and top.mode is None:
        top.mode = "set"
        top.count += top.first
    top.comma = True
    top.state = 0
    return True


def _row(top: _Frame, match: re.Match, found: list[Region]) -> bool:
    """A list or tuple of numbers (and the comma after it): an item of `top`, in one step."""
    text = match.group()
    opening = text[0]
    end = match.start() + text.rindex("]" if opening == "[" else ")")
    inside = match.string[match.start() + 1:end].strip(" \t\f\r\n")
    commas = inside.count(",")
    items = commas + (0 if not inside or inside.endswith(",") else 1)
    own = items + 1
    if opening == "(" and not commas:
        own = 1  # `(x)` is x, a number; `()` is one value too
    elif own > _FULL and not top.unary:
        found.append(Region(match.start(), end, opening))
    if not top.item(own if own <= _FULL else 1):
        return False
    return "," not in text[end - match.start():] or _step_comma(top)


def _closed(stack: list[_Frame], count: int) -> bool:
    return stack[-1].item(count) if stack else True


_MARKS = {"[": "*...", "{": "*...", "(": "*...,", ":": "**..."}
_BREAKS = re.compile(r"\r\n|\r|\n")


def _width(piece: str) -> int:
    return len(piece) if piece.isascii() else len(piece.encode("utf-8", "surrogatepass"))


def _mark_at(text: str, region: Region) -> int:
    """The offset of the mark in the elided text: at the start of the first piece of the display's
    inside, between line breaks, wide enough for it (-1: none is)."""
    at, mark = region.start + 1, len(_MARKS[region.kind])
    while at <= region.end:
        found = _BREAKS.search(text, at, region.end)
        piece_end = found.start() if found else region.end
        if _width(text[at:piece_end]) >= mark:
            return at
        if found is None:
            break
        at = found.end()
    return -1


def _blank(text: str, region: Region) -> str:
    """The inside of a region's brackets: spaces of the same UTF-8 width, line breaks kept, the mark."""
    mark, at = _MARKS[region.kind], _mark_at(text, region)
    pieces = _BREAKS.split(text[region.start + 1:region.end])
    breaks = _BREAKS.findall(text, region.start + 1, region.end)
    blank = [" " * _width(piece) for piece in pieces]
    offset = region.start + 1
    for index, piece in enumerate(pieces):
        if offset == at:
            blank[index] = mark + blank[index][len(mark):]
        offset += len(piece) + (len(breaks[index]) if index < len(breaks) else 0)
    return "".join(part for pair in zip(blank, [*breaks, ""]) for part in pair)


def elided(text: str, found: list[Region]) -> str:
    """`text` with each region's inside replaced (same UTF-8 length, line breaks kept)."""
    parts, at = [], 0
    for region in found:
        parts.append(text[at:region.start + 1])
        parts.append(_blank(text, region))
        at = region.end
    parts.append(text[at:])
    return "".join(parts)


def parse(text: str) -> ast.Module:
    """`ast.parse(text)`, its big data displays' contents elided where that is sure to change nothing
    but them (see the module docstring); raises what `ast.parse(text)` raises."""
    return parse_elided(text)[0]


def parse_elided(text: str) -> tuple[ast.Module, list[Region]]:
    """`parse`'s tree and the regions elided in it: each one checked on that very tree."""
    found = [region for region in regions(text) if _mark_at(text, region) >= 0]
    for attempt in range(MAX_RETRIES):
        if not found:
            break
        try:
            tree = _parse(elided(text, found))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            break  # the text as it is says what is wrong with it
        good = _checked(tree, text, found)
        if all(good):
            return tree, found
        del tree
        # The first doubtful one put back (a string's quote in it may be what made those after it doubtful);
        # on the last tries, every doubtful one.
        first = good.index(False)
        found = [r for i, (r, ok) in enumerate(zip(found, good)) if ok or i != first and attempt < MAX_RETRIES - 2]
    return _parse(text), []


def _parse(text: str) -> ast.Module:
    with warnings.catch_warnings():  # "invalid escape sequence" and friends: not ours to print
        warnings.simplefilter("ignore")
        return ast.parse(text)


def _position(text: str, offset: int) -> tuple[int, int]:
    """(1-based line, UTF-8 column) of an offset, as `ast` gives them."""
    line = text.count("\n", 0, offset) + text.count("\r", 0, offset) - text.count("\r\n", 0, offset) + 1
    start = max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)) + 1
    prefix = text[start:offset]
    return line, len(prefix) if prefix.isascii() else len(prefix.encode("utf-8", "surrogatepass"))


def _checked(tree: ast.Module, text: str, found: list[Region]) -> list[bool]:
    """For each region, whether the elided tree holds it as intended."""
    wanted = {_position(text, region.start): index for index, region in enumerate(found)}
    seen = [False] * len(found)
    starts = [statement.lineno for statement in tree.body]
    holding = set()  # the top-level statements on the regions' lines (`a = [...]; b = [...]`: two)
    for line, _ in wanted:
        index = bisect_right(starts, line) - 1
        while index >= 0 and tree.body[index].end_lineno >= line:
            holding.add(index)
            index -= 1
    for index in sorted(holding):
        _visit(tree.body[index], wanted, found, text, seen)
    return seen


_HOLDERS = (ast.List, ast.Tuple, ast.Set, ast.Dict)


def _visit(statement: ast.stmt, wanted: dict, found: list[Region], text: str, seen: list[bool]) -> None:
    stack = [(statement, None, 0)]
    while stack:
        node, parent, depth = stack.pop()
        if isinstance(node, _HOLDERS):
            index = wanted.get((node.lineno, node.col_offset))
            if index is not None:
                seen[index] = depth <= MAX_PLACE_DEPTH and _intended(node, parent, found[index], text)
                continue
        for child in ast.iter_child_nodes(node):
            stack.append((child, node, depth + 1))


def _intended(node: ast.AST, parent: ast.AST | None, region: Region, text: str) -> bool:
    """Is `node` the elided display of `region`, where its elements are read only through its value?"""
    line, column = _position(text, region.end)
    if (node.end_lineno, node.end_col_offset) != (line, column + 1):
        return False
    mark_line, mark_column = _position(text, _mark_at(text, region))
    if region.kind == ":":  # `{**...}`
        if not (isinstance(node, ast.Dict) and node.keys == [None] and len(node.values) == 1):
            return False
        inner, stars = node.values[0], 2
    else:  # `[*...]`, `(*...,)`, `{*...}`
        expected = {"[": ast.List, "(": ast.Tuple, "{": ast.Set}[region.kind]
        if not (isinstance(node, expected) and len(node.elts) == 1 and isinstance(node.elts[0], ast.Starred)):
            return False
        if not isinstance(getattr(node, "ctx", ast.Load()), ast.Load):
            return False
        star, inner, stars = node.elts[0], node.elts[0].value, 1
        if (star.lineno, star.col_offset) != (mark_line, mark_column):
            return False
    if not (isinstance(inner, ast.Constant) and inner.value is Ellipsis
            and (inner.lineno, inner.col_offset) == (mark_line, mark_column + stars)):
        return False
    return _readable_place(node, parent)


def _readable_place(node: ast.AST, parent: ast.AST | None) -> bool:
    """Places where the analysis reads a display only through its value (`evaluate`): not a loop's
    iterable (each item is a value of the loop variable), an unpacking's value (each item binds a name),
    a subscript's index (counted), a starred or unary operand, a pattern, ..."""
    if isinstance(parent, ast.Assign):
        return parent.value is node and not any(isinstance(t, (ast.Tuple, ast.List, ast.Starred))
                                                for t in parent.targets)
    if isinstance(parent, (ast.AnnAssign, ast.AugAssign, ast.Return, ast.Expr)):
        return parent.value is node
    if isinstance(parent, ast.Call):
        return any(argument is node for argument in parent.args)
    if isinstance(parent, ast.keyword):
        return parent.arg is not None
    if isinstance(parent, ast.BinOp):
        return True
    if isinstance(parent, (ast.List, ast.Tuple, ast.Set)):
        return isinstance(parent, ast.Set) or isinstance(parent.ctx, ast.Load)
    if isinstance(parent, ast.Dict):
        return any(value is node for value in parent.values)
    return False
