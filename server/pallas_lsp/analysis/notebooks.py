"""Jupyter notebooks (nbformat 4) read as one Python module, and positions mapped back to cells.

As ruff reads them: the code cells, in order, each ended by a line break, make one module, so a
name defined in one cell is known in the next. A cell whose cell magic runs something else than
Python (`%%bash`, `%%writefile`), that starts with an automagic (`pip install x`), or whose
language is not Python is left out; IPython line magics, shell escapes and help lines become
`pass` (`x = !ls` becomes `x = ...`) so that the rest parses, their columns unchanged. Cells are
numbered as ruff numbers them: 1-based among all the notebook's cells, markdown included.

Only the standard library reads the file (`json`). A notebook read from its JSON is rewritten by
replacing the `source` values of the cells that changed and nothing else: outputs, metadata, ids,
key order, indentation, escapes and the final newline stay as they were, byte for byte.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from json.decoder import scanstring

from ..source_text import LINE_BREAK, Unanalysable, read_regular_bytes
from .findings import Span
from .notebook_json import NotebookError, NotebookOverLimit, check_cell_count, line_column, load, value_end

NOTEBOOK_SUFFIX = ".ipynb"
# Outputs (images, widget state) make notebooks far larger than their code: the code's own limit
# (`source_text.MAX_FILE_BYTES`) applies to the module the cells make, this one to the file.
MAX_NOTEBOOK_BYTES = 100_000_000

# Cell magics whose body is Python that runs in the notebook's namespace (ruff's list).
PYTHON_CELL_MAGICS = frozenset({"capture", "debug", "ipytest", "prun", "pypy", "python", "python3", "time", "timeit"})
# Magics IPython runs without a `%` (automagic) on a cell's first line: such a cell is shell-like
# throughout (IPython allows no Python after it), so it is left out, as ruff leaves it out.
AUTOMAGICS = frozenset("""alias alias_magic autoawait autocall automagic bookmark cd code_wrap colors conda config
debug dhist dirs doctest_mode edit env gui history killbgscripts load load_ext loadpy logoff logon logstart
logstate logstop lsmagic macro magic mamba matplotlib micromamba notebook page pastebin pdb pdef pdoc pfile
pinfo pinfo2 pip popd pprint precision prun psearch psource pushd pwd pycat pylab quickref recall rehashx
reload_ext rerun reset reset_selective run save sc set_env sx system tb time timeit unalias unload_ext who
who_ls whos xdel xmode""".split())
_ASSIGNMENT_OPERATORS = frozenset({"=", "+=", "-=", "*=", "/=", "//=", "%=", "**=", "&=", "|=", "^="})
_MAGIC_ASSIGNMENT = re.compile(r"([ \t]*[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*[ \t]*=[ \t]*)[!%]")
_LINE_NOTE = re.compile(r"\(line (\d+)\)")  # how hovers and trace notes name a line of the module
_HELP = re.compile(r"[ \t]*(?:\?{1,2}[A-Za-z_][\w.]*|[A-Za-z_][\w.]*\?{1,2})[ \t]*$")


def is_notebook(path: str) -> bool:
    return path.endswith(NOTEBOOK_SUFFIX)


@dataclass(frozen=True)
class Cell:
    kind: str  # "code", "markdown", "raw"
    source: str
    language: str = "python"  # a code cell's language (VS Code keeps it in `metadata.vscode.languageId`)


@dataclass(frozen=True)
class _Placed:
    """Where a cell of the module lies in it, and which of its lines were blanked."""

    cell: int  # 0-based among all cells
    first_line: int
    line_count: int
    added_break: bool  # the module added the line break that ends the cell
    blanked: frozenset[int]


def _lines_keepends(text: str) -> list[str]:
    parts, ends = LINE_BREAK.split(text), LINE_BREAK.findall(text)
    lines = [part + end for part, end in zip(parts, ends)]
    return lines + ([parts[-1]] if parts[-1] else [])


@lru_cache(maxsize=4096)
def runs_as_python(cell: Cell) -> bool:
    """Whether the cell's code belongs to the module (ruff's `is_valid_python_code_cell`)."""
    if cell.kind != "code" or cell.language != "python":
        return False
    lines = _lines_keepends(cell.source)
    tokens = lines[0].split() if lines else []
    if tokens and tokens[0] in AUTOMAGICS and (len(tokens) < 2 or tokens[1] not in _ASSIGNMENT_OPERATORS):
        return False
    for line in lines:
        first = next(iter(line.split()), "")
        if len(first) > 2 and first.startswith("%%") and first[2:] not in PYTHON_CELL_MAGICS:
            return False
    return True


def _blank_magics(lines: list[str]) -> tuple[list[str], set[int]]:
    """The cell's lines with each IPython escape at the start of a logical line made Python (same
    indentation, same line ending), and the numbers of the lines changed. Lines inside brackets,
    strings or after a backslash continue a Python line (`% b` there is a modulo)."""
    out, blanked = [], set()
    depth, quote, continued, magic_continues = 0, None, False, False
    for number, line in enumerate(lines):
        content = line.rstrip("\r\n")
        ending = line[len(content):]
        if magic_continues:  # a magic's backslash continuation
            out.append(ending if not content.strip() else " " * (len(content) - len(content.lstrip())) + "pass" + ending)
            blanked.add(number)
            magic_continues = content.endswith("\\")
            continue
        if depth == 0 and quote is None and not continued:
            replacement = _magic_replacement(content)
            if replacement is not None:
                out.append(replacement + ending)
                blanked.add(number)
                magic_continues = content.endswith("\\")
                continue
        out.append(line)
        depth, quote, continued = _scan(content, depth, quote)
    return out, blanked


@lru_cache(maxsize=4096)
def _module_lines(source: str) -> tuple[tuple[str, ...], frozenset[int], bool]:
    """A cell's lines as the module holds them, the numbers of those blanked, and whether the module
    added the line break that ends it. Kept by source: an edit changes one cell, and the notebook's
    module is made again from all of them."""
    lines, blanked = _blank_magics(_lines_keepends(source))
    added = not lines or not lines[-1].endswith(("\n", "\r"))
    if added:
        lines = lines[:-1] + [(lines[-1] if lines else "") + "\n"]
    return tuple(lines), frozenset(blanked), added


def _magic_replacement(content: str) -> str | None:
    """What an IPython escape line becomes (None: it is Python)."""
    assignment = _MAGIC_ASSIGNMENT.match(content)
    if assignment:
        return assignment.group(1) + "..."
    stripped = content.lstrip()
    if stripped[:1] in ("%", "!", "?") or _HELP.match(content):
        return content[:len(content) - len(stripped)] + "pass"
    return None


_CODE_MARK = re.compile(r"[\"'#()\[\]{}]")  # what changes the state of a Python line


def _scan(content: str, depth: int, quote: str | None) -> tuple[int, str | None, bool]:
    """Bracket depth, open string quote, and backslash continuation after one line of Python."""
    i, n = 0, len(content)
    while i < n:
        if quote is not None:
            end = content.find(quote, i)
            escape = content.find("\\", i)
            if 0 <= escape < end or (end < 0 <= escape):
                i = escape + 2
                continue
            if end < 0:
                break
            i = end + len(quote)
            quote = None
            continue
        mark = _CODE_MARK.search(content, i)
        if mark is None:
            break
        c, i = mark.group(), mark.start()
        if c == "#":
            return depth, None, False
        if c in "\"'":
            quote = c * 3 if content.startswith(c * 3, i) else c
            i += len(quote)
            continue
        depth = depth + 1 if c in "([{" else max(0, depth - 1)
        i += 1
    continued = content.endswith("\\")
    if quote is not None and len(quote) == 1 and not continued:
        quote = None  # an unterminated string ends with its line (a syntax error the parser reports)
    return depth, quote, continued


class Notebook:
    """The cells, the module they make, and the mapping between their positions.

    Made from a file's JSON (`from_json`: it can then be written back, `json_text`) or from the
    cells an editor sends (`from_cells`)."""

    def __init__(self, cells: list[Cell], _file: "_JsonFile | None" = None):
        self.cells = tuple(cells)
        self._file = _file
        pieces: list[str] = []
        self._placed: list[_Placed] = []
        self._line_to_placed: list[int] = []
        line = 0
        for index, cell in enumerate(self.cells):
            if not runs_as_python(cell):
                continue
            lines, blanked, added = _module_lines(cell.source)
            pieces.extend(lines)
            self._line_to_placed.extend([len(self._placed)] * len(lines))
            self._placed.append(_Placed(index, line, len(lines), added, blanked))
            line += len(lines)
        self.module = "".join(pieces)

    # ---- reading ---------------------------------------------------------------------------------

    @classmethod
    def from_cells(cls, cells: list[Cell]) -> "Notebook":
        return cls(cells)

    @classmethod
    def from_json(cls, raw: str) -> "Notebook":
        """The notebook in `raw` (the file's text, BOM removed); NotebookError says why it is none."""
        document = load(raw)
        if not isinstance(document, dict) or not isinstance(document.get("cells"), list):
            raise NotebookError("not a Jupyter notebook: no list of cells")
        if document.get("nbformat") != 4:
            raise NotebookError(f"nbformat {document.get('nbformat')!r} is not supported (only nbformat 4)")
        check_cell_count(document["cells"])
        try:
            file = _JsonFile.scan(raw)
        except RecursionError:  # `json` read it with a shorter stack than ours
            raise NotebookError("not valid JSON: nested too deeply") from None
        cells = []
        for index, cell in enumerate(document["cells"]):
            if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
                raise NotebookError(f"cell {index + 1} has no cell_type", *line_column(raw, file.cell_starts[index]))
            source = cell.get("source", "")
            if isinstance(source, list) and all(isinstance(part, str) for part in source):
                source = "".join(source)
            if not isinstance(source, str):
                raise NotebookError(f"cell {index + 1}: its source is neither a string nor a list of strings",
                                    *line_column(raw, file.cell_starts[index]))
            metadata = cell.get("metadata")
            vscode = metadata.get("vscode") if isinstance(metadata, dict) else None
            language = vscode.get("languageId") if isinstance(vscode, dict) else None
            cells.append(Cell(cell["cell_type"], source, language if isinstance(language, str) else "python"))
        return cls(cells, file)

    # ---- positions -------------------------------------------------------------------------------

    def cell_number(self, cell: int) -> int:
        """How a cell is named to the user (`cell 4`): 1-based among all cells."""
        return cell + 1

    def module_cells(self) -> list[int]:
        """The cells (0-based) whose code is in the module, in order."""
        return [placed.cell for placed in self._placed]

    def _placed_at(self, line: int) -> _Placed | None:
        if 0 <= line < len(self._line_to_placed):
            return self._placed[self._line_to_placed[line]]
        if line == len(self._line_to_placed) and self._placed:  # the end of the module: the last cell's end
            return self._placed[-1]
        return None

    def to_cell(self, line: int, column: int) -> tuple[int, int, int] | None:
        """(cell, line in it, column) of a module position (0-based, code points)."""
        placed = self._placed_at(line)
        if placed is None:
            return None
        return placed.cell, line - placed.first_line, column

    def cell_span(self, span: Span, clip: bool = False) -> tuple[int, Span] | None:
        """A module span as (cell, span in the cell); None when it reaches into another cell (with
        `clip`, cut at the end of its first cell instead: where a finding is shown). A span ending
        where the next cell starts ends after its own cell's last line break."""
        start, end = self.to_cell(span.line, span.column), self.to_cell(span.end_line, span.end_column)
        if start is None or end is None:
            return None
        if end[0] != start[0] and (clip or end[1:] == (0, 0)) and (span.end_line, span.end_column) > (span.line, span.column):
            placed = next(p for p in self._placed if p.cell == start[0])
            if clip or span.end_line == placed.first_line + placed.line_count:
                end = (start[0], placed.line_count, 0)
        if start[0] != end[0]:
            return None
        return start[0], Span(start[1], start[2], end[1], end[2])

    def to_module(self, cell: int, line: int, column: int) -> tuple[int, int] | None:
        """The module position of a cell position; None for a cell left out of the module."""
        for placed in self._placed:
            if placed.cell == cell:
                return placed.first_line + min(line, placed.line_count), column
        return None

    def cell_lines_in(self, text: str) -> str:
        """A note naming lines of the module (`body (line 12)`) with the cell's line instead
        (`body (cell 4, line 2)`), as the notebook shows them."""
        def cell_line(match):
            where = self.to_cell(int(match[1]) - 1, 0)
            return match[0] if where is None else f"(cell {self.cell_number(where[0])}, line {where[1] + 1})"

        return _LINE_NOTE.sub(cell_line, text)

    def module_through(self, cell: int) -> str:
        """The module of the code cells up to and including `cell` (one the module holds)."""
        first, count = self.cell_line_range(cell)
        return "".join(_lines_keepends(self.module)[:first + count])

    def cell_line_range(self, cell: int) -> tuple[int, int] | None:
        """(first module line, line count) of a cell in the module."""
        for placed in self._placed:
            if placed.cell == cell:
                return placed.first_line, placed.line_count
        return None

    # ---- edits -----------------------------------------------------------------------------------

    def edited(self, edits) -> "Notebook | None":
        """The notebook with `edits` (each with `.span` and `.new_text`, module positions) made in its
        cells; None when one reaches across a cell boundary or into a blanked magic line (as ruff,
        a fix that spans cells is not applied)."""
        by_cell: dict[int, list[tuple[Span, str]]] = {}
        for edit in edits:
            where = self.cell_span(edit.span)
            if where is None:
                return None
            cell, span = where
            placed = next(p for p in self._placed if p.cell == cell)
            touched = range(span.line, span.end_line + (0 if span.end_column == 0 and span.end_line > span.line else 1))
            if any(line in placed.blanked for line in touched) and not (
                    span.line == span.end_line and span.column == span.end_column == 0):
                return None
            by_cell.setdefault(cell, []).append((span, edit.new_text))
        if not by_cell:
            return self
        sources = {}
        for cell, spans in by_cell.items():
            placed = next(p for p in self._placed if p.cell == cell)
            sources[cell] = _apply(self.cells[cell].source, spans, placed.added_break)
        return self.with_sources(sources)

    def with_sources(self, sources: dict[int, str]) -> "Notebook":
        cells = [Cell(c.kind, sources.get(i, c.source), c.language) for i, c in enumerate(self.cells)]
        if self._file is None:
            return Notebook(cells)
        raw = self._file.replaced(sources)
        return Notebook(cells, _JsonFile.scan(raw, self._file.bom))

    # ---- the file --------------------------------------------------------------------------------

    def json_text(self) -> str:
        """The file's text (without its BOM) with the cells' current sources."""
        if self._file is None:
            raise ValueError("a notebook made from an editor's cells has no file text")
        return self._file.raw

    def file_position(self, cell: int, line: int, column: int) -> tuple[int, int]:
        """(line, column) in the file's JSON text of a cell position: where the character is written."""
        if self._file is None:
            raise ValueError("a notebook made from an editor's cells has no file text")
        lines = _lines_keepends(self.cells[cell].source)
        offset = sum(len(text) for text in lines[:line]) + column
        return line_column(self._file.raw, self._file.raw_offset(cell, offset))


def _apply(source: str, edits: list[tuple[Span, str]], added_break: bool) -> str:
    """The cell's source with cell-relative edits made, on the cell as the module holds it (with the
    line break the module added, taken off again after)."""
    piece = source + "\n" if added_break else source
    lines = _lines_keepends(piece)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, column: int) -> int:
        if line >= len(lines):
            return len(piece)
        return min(starts[line] + column, starts[line] + len(lines[line].rstrip("\r\n")))

    for span, text in sorted(edits, key=lambda e: (e[0].line, e[0].column, e[0].end_line, e[0].end_column), reverse=True):
        piece = piece[:offset(span.line, span.column)] + text + piece[offset(span.end_line, span.end_column):]
    return piece[:-1] if added_break and piece.endswith("\n") else piece


# ---- the JSON text: where each cell's source is written ---------------------------------------------

_WHITESPACE = re.compile(r"[ \t\n\r]*")


def _space(raw: str, i: int) -> int:
    return _WHITESPACE.match(raw, i).end()


def _members(raw: str, i: int):
    """(key, value start, value end) of the object at `i`."""
    i = _space(raw, i + 1)
    if raw[i] == "}":
        return
    while True:
        key, i = scanstring(raw, i + 1)
        i = _space(raw, _space(raw, i) + 1)
        end = value_end(raw, i)
        yield key, i, end
        i = _space(raw, end)
        if raw[i] != ",":
            return
        i = _space(raw, i + 1)


def _elements(raw: str, i: int):
    """(start, end) of each element of the array at `i`."""
    i = _space(raw, i + 1)
    if raw[i] == "]":
        return
    while True:
        end = value_end(raw, i)
        yield i, end
        i = _space(raw, end)
        if raw[i] != ",":
            return
        i = _space(raw, i + 1)


@dataclass
class _JsonFile:
    raw: str
    bom: bool
    cell_starts: list[int]
    sources: list[tuple[int, int] | None]  # each cell's source value (start, end), None without one
    pieces: list[list[tuple[int, int]]]  # the string tokens of each cell's source value

    @classmethod
    def scan(cls, raw: str, bom: bool = False) -> "_JsonFile":
        start = _space(raw, 0)
        cell_starts, sources, pieces = [], [], []
        cells_at = None
        for key, value_start, _ in _members(raw, start):
            if key == "cells":
                cells_at = value_start
        for cell_start, _ in _elements(raw, cells_at) if cells_at is not None else ():
            cell_starts.append(cell_start)
            source = None
            if raw[cell_start] == "{":
                for key, value_start, value_end in _members(raw, cell_start):
                    if key == "source":
                        source = (value_start, value_end)
            sources.append(source)
            if source is None:
                pieces.append([])
            elif raw[source[0]] == "[":
                pieces.append(list(_elements(raw, source[0])))
            else:
                pieces.append([source])
        return cls(raw, bom, cell_starts, sources, pieces)

    def raw_offset(self, cell: int, offset: int) -> int:
        """Where the cell source's character `offset` is written in the JSON text."""
        for start, end in self.pieces[cell]:
            decoded = scanstring(self.raw, start + 1)[0]
            if offset < len(decoded) or (start, end) == self.pieces[cell][-1]:
                return _escaped_offset(self.raw, start + 1, min(offset, len(decoded)))
            offset -= len(decoded)
        source = self.sources[cell]
        return source[0] if source else self.cell_starts[cell]

    def replaced(self, sources: dict[int, str]) -> str:
        """The text with these cells' source values written anew, in the layout of the old ones."""
        raw = self.raw
        ascii_only = raw.isascii() and "\\u" in raw
        newline = "\r\n" if "\r\n" in raw else "\n"
        for cell in sorted(sources, reverse=True):
            span = self.sources[cell]
            if span is None:
                raise ValueError(f"cell {cell + 1} has no source to rewrite")
            start, end = span
            if raw[start] == '"':
                value = json.dumps(sources[cell], ensure_ascii=ascii_only)
            else:
                value = self._array(cell, sources[cell], ascii_only, newline)
            raw = raw[:start] + value + raw[end:]
        return raw

    def _array(self, cell: int, source: str, ascii_only: bool, newline: str) -> str:
        start, end = self.sources[cell]
        parts = [part for part in re.split(r"(?<=\n)", source) if part]
        if not parts:
            return "[]"
        key_line_start = self.raw.rfind("\n", 0, start) + 1
        key_indent = self.raw[key_line_start:_space_only(self.raw, key_line_start)]
        pieces = self.pieces[cell]
        if pieces and "\n" in self.raw[start:pieces[0][0]]:  # elements on their own lines: their indentation
            first = pieces[0][0]
            item_indent = self.raw[self.raw.rfind("\n", 0, first) + 1:first]
            close_start = self.raw.rfind("\n", 0, end - 1) + 1
            close_indent = self.raw[close_start:end - 1] if not self.raw[close_start:end - 1].strip() else key_indent
        elif pieces:  # all on the key's line: kept so
            return "[" + ", ".join(json.dumps(p, ensure_ascii=ascii_only) for p in parts) + "]"
        else:
            close_indent = key_indent
            item_indent = key_indent + (_indent_unit(self.raw) or " ")
        items = ("," + newline).join(item_indent + json.dumps(p, ensure_ascii=ascii_only) for p in parts)
        return "[" + newline + items + newline + close_indent + "]"


def _space_only(raw: str, i: int) -> int:
    while i < len(raw) and raw[i] in " \t":
        i += 1
    return i


def _indent_unit(raw: str) -> str:
    """The file's indentation step: the indentation of its first indented line (nbformat writes 1 space)."""
    match = re.search(r"\n([ \t]+)\S", raw)
    return match.group(1) if match else ""


def _escaped_offset(raw: str, i: int, count: int) -> int:
    """The offset in `raw` after `count` characters of the JSON string body starting at `i`."""
    while count > 0:
        if raw[i] == "\\":
            if raw[i + 1] == "u":
                unit = int(raw[i + 2:i + 6], 16)
                i += 6
                if 0xD800 <= unit < 0xDC00 and raw.startswith("\\u", i):  # a surrogate pair: one character
                    i += 6
            else:
                i += 2
        else:
            i += 1
        count -= 1
    return i


class InvalidNotebook(Unanalysable):
    """A `.ipynb` file that is no notebook pallas-lsp can read: reported as a PAL000 finding."""

    def __init__(self, path: str, error: NotebookError):
        super().__init__(path, f"not a valid Jupyter notebook: {error.message}")
        self.error = error


def invalid_notebook_finding(path: str, error: InvalidNotebook):
    """PAL000 where the file stops being a notebook (JSON positions: there are no cells to point into)."""
    from .findings import Finding

    where = error.error
    return Finding(path, Span(where.line, where.column, where.line, where.column + 1), "PAL000", "syntax-error",
                   "error", f"Not a valid Jupyter notebook: {where.message}")


def read_notebook_file(path: str) -> Notebook:
    """The notebook in a file; InvalidNotebook when it is none, OSError when it cannot be read."""
    data = read_regular_bytes(path, MAX_NOTEBOOK_BYTES + 1)
    if len(data) > MAX_NOTEBOOK_BYTES:
        raise Unanalysable(path, f"a notebook over the {MAX_NOTEBOOK_BYTES // 1_000_000} MB limit for analysed notebooks")
    try:
        return read_notebook_bytes(data)
    except NotebookOverLimit as exc:  # valid, but beyond what is analysed: skipped, as a file too large is
        raise Unanalysable(path, exc.message) from None
    except NotebookError as exc:
        raise InvalidNotebook(path, exc) from None


def read_notebook_bytes(data: bytes) -> Notebook:
    """A notebook file's bytes (UTF-8, as nbformat writes them; a BOM is kept on rewrite)."""
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        raw = data[3 if bom else 0:].decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start)
        raise NotebookError(f"not UTF-8: {exc.reason} at byte {exc.start}", line, 0) from None
    notebook = Notebook.from_json(raw)
    if bom:
        notebook._file.bom = True
    return notebook
