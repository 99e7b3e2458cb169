"""Finding, in LibCST trees, the nodes the `ast`-based analysis talks about, and rewriting them.

The analysis works on `ast` (fast, tolerant); fixes are LibCST rewrites (they keep comments and
formatting). Only the top-level statements a fix touches are parsed with LibCST, each on its own
(a 20,000-line module costs what its one kernel and its one launch cost); nodes are matched by
source range. Every change is registered against an original node and applied in one
transformation per statement, so rewrites of nested nodes compose.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ..analysis.findings import Span, TextEdit
from .edits import minimal_edits, newline_of, parses
from .layout import indent_unit, line_length, style_of, wrap_long_lines

Rewrite = Callable[[cst.CSTNode], "cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel"]

# Lines as `ast` numbers them: only \r\n, \n and \r end a line.
_LINES = re.compile(r".*?(?:\r\n|\n|\r)|.+$", re.DOTALL)
# LibCST mangles lines ended by a bare `\r` (it drops blank lines and the last line break), so they
# are parsed as `\n` (one character for one: every position stays where it was) and written back
# as `\r` where the file's lines end so.
_BARE_CR = re.compile(r"\r(?!\n)")
_BARE_LF = re.compile(r"(?<!\r)\n")


class CannotFix(Exception):
    """The fix cannot be made safely here; the message says why."""


@dataclass(eq=False)
class _Chunk:
    """Whole lines holding one or more top-level statements, parsed on their own (`text` with each
    bare `\r` read as `\n`)."""

    first_line: int
    text: str
    module: cst.Module
    positions: dict
    parents: dict = field(default_factory=dict)
    rewrites: dict = field(default_factory=dict)

    def parent_map(self) -> dict:
        if not self.parents:
            stack = [self.module]
            while stack:
                node = stack.pop()
                for child in node.children:
                    self.parents[child] = node
                    stack.append(child)
        return self.parents


class CstFile:
    """The LibCST side of one file: statements parsed on demand, and their pending rewrites."""

    def __init__(self, model):
        self.path = model.path
        self.text = model.text
        self.lines, self.ranges = lines_of(model), ranges_of(model)
        self.chunks: dict[tuple[int, int], _Chunk] = {}
        self.owner: dict[cst.CSTNode, _Chunk] = {}
        self.line_length = line_length(self.path)
        self.style, self.indent = layout_of(model)
        self.cr_lines = newline_of(self.lines) == "\r"
        self.removed: list[tuple[int, int]] = []  # top-level statements removed whole, lines first..last

    # ---- locating -------------------------------------------------------------------------------

    def _chunk(self, line: int) -> _Chunk:
        found = chunk_range(self.ranges, line)
        if found is None:
            raise CannotFix(f"no statement at line {line + 1}")
        if found not in self.chunks:
            start, end = found
            text = _BARE_CR.sub("\n", "".join(self.lines[start:end + 1]))
            module, positions = _parsed(text)
            self.chunks[found] = _Chunk(start, text, module, positions)
        return self.chunks[found]

    def _own(self, chunk: _Chunk, node):
        if node is not None:
            self.owner[node] = chunk
        return node

    def find(self, span: Span, kind: type | tuple[type, ...]) -> cst.CSTNode | None:
        """The node of `kind` at `span`: exactly there, else the largest inside it (`ast` counts a
        tuple's parentheses, LibCST may not), else the smallest around it (parentheses the other way)."""
        chunk = self._chunk(span.line)
        offset = chunk.first_line
        wanted = ((span.line - offset, span.column), (span.end_line - offset, span.end_column))
        inside, around = [], []
        for node, where in chunk.positions.items():
            if not isinstance(node, kind):
                continue
            start = (where.start.line - 1, where.start.column)
            end = (where.end.line - 1, where.end.column)
            if (start, end) == wanted:
                return self._own(chunk, node)
            if start >= wanted[0] and end <= wanted[1]:
                inside.append((start, [-end[0], -end[1]], node))
            elif start <= wanted[0] and end >= wanted[1]:
                around.append(((end[0] - start[0], end[1] - start[1]), node))
        if inside:
            inside.sort(key=lambda item: (item[0], item[1]))
            return self._own(chunk, inside[0][2])
        if around:
            around.sort(key=lambda item: item[0])
            return self._own(chunk, around[0][1])
        return None

    def find_ast(self, model, node: ast.AST, kind: type | tuple[type, ...]) -> cst.CSTNode | None:
        return self.find(model.source.span(node), kind)

    def function(self, node: ast.AST) -> cst.FunctionDef | None:
        """The `def` of an `ast` function (matched by name and the line of `def`)."""
        chunk = self._chunk(node.lineno - 1)
        for candidate in chunk.positions:
            if (isinstance(candidate, cst.FunctionDef) and candidate.name.value == getattr(node, "name", None)
                    and chunk.positions[candidate.name].start.line - 1 + chunk.first_line == node.lineno - 1):
                return self._own(chunk, candidate)
        return None

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        chunk = self.owner[node]
        return self._own(chunk, chunk.parent_map().get(node))

    # ---- rewriting ------------------------------------------------------------------------------

    def rewrite(self, node: cst.CSTNode, change: Rewrite) -> None:
        """Register `change(updated_node)` for `node`; several changes to one node apply in order."""
        self.owner[node].rewrites.setdefault(node, []).append(change)

    def remove_top_level(self, node: ast.stmt) -> None:
        """Remove a top-level statement with the blank lines after it, so the statements around it keep the
        blank lines they had between them (comments above it stay)."""
        found = chunk_range(self.ranges, node.lineno - 1)
        if found is None or found in self.chunks:
            raise CannotFix(f"no statement of its own at line {node.lineno}")
        first, last = found
        if self.lines[first].lstrip().startswith("#"):
            raise CannotFix("a comment begins the statement's lines")
        following = [r for r in self.ranges if r[0] > last]
        end = following[0][0] - 1 if following else len(self.lines) - 1
        while end > last and self.lines[end].strip().startswith("#"):
            end -= 1  # comments before the next statement stay with it
        if any(self.lines[n].strip() for n in range(last + 1, end + 1)):
            raise CannotFix("the statement shares its lines")
        self.removed.append((first, end))

    def edits(self) -> list[TextEdit]:
        """Text edits for every rewritten statement; CannotFix if one no longer parses."""
        result = [TextEdit(self.path, Span(first, 0, last + 1, 0), "") for first, last in self.removed]
        for chunk in self.chunks.values():
            if not chunk.rewrites:
                continue
            new = chunk.module.visit(_Apply(chunk.rewrites)).code
            if not new.strip():
                new = ""  # the statement was removed: its line goes too
            wrapped = wrap_long_lines(chunk.text, new, self.line_length, self.style, self.indent)
            new = wrapped if parses(wrapped) else new  # a wrap that breaks the statement: the long line stays
            if not parses(new):
                raise CannotFix("the rewritten statement does not parse")
            for edit in minimal_edits(self.path, chunk.text, new):
                span = edit.span
                result.append(TextEdit(self.path, Span(span.line + chunk.first_line, span.column,
                                                       span.end_line + chunk.first_line, span.end_column),
                                       _BARE_LF.sub("\r", edit.new_text) if self.cr_lines else edit.new_text))
        return result


def statement_ranges(tree: ast.Module) -> list[tuple[int, int]]:
    """0-based inclusive line ranges of the top-level statements (decorators included), merged
    where statements share a line."""
    ranges: list[tuple[int, int]] = []
    for statement in tree.body:
        start = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", []))]) - 1
        end = (statement.end_lineno or statement.lineno) - 1
        if ranges and start <= ranges[-1][1]:
            ranges[-1] = (ranges[-1][0], max(end, ranges[-1][1]))
        else:
            ranges.append((start, end))
    return ranges


def lines_of(model) -> list[str]:
    """The module's lines with their ends, computed once per text (every fix of it shares them)."""
    if "fix-lines" not in model.eval_cache:
        model.eval_cache["fix-lines"] = _LINES.findall(model.text)
    return model.eval_cache["fix-lines"]


def ranges_of(model) -> list[tuple[int, int]]:
    if "fix-ranges" not in model.eval_cache:
        model.eval_cache["fix-ranges"] = statement_ranges(model.tree)
    return model.eval_cache["fix-ranges"]


def layout_of(model) -> tuple[str, str]:
    """The file's call style and indent unit, computed once per text (every fix of it shares them)."""
    if "fix-layout" not in model.eval_cache:
        as_lf = _BARE_CR.sub("\n", model.text)  # tokenize, too, reads a bare `\r` as no line end
        model.eval_cache["fix-layout"] = (style_of(as_lf, ranges_of(model)), indent_unit(as_lf))
    return model.eval_cache["fix-layout"]


def chunk_range(ranges: list[tuple[int, int]], line: int) -> tuple[int, int] | None:
    """The range holding `line` (ranges are sorted and disjoint)."""
    index = bisect.bisect_right(ranges, (line, float("inf"))) - 1
    if index >= 0 and ranges[index][0] <= line <= ranges[index][1]:
        return ranges[index]
    return None


_PARSED: OrderedDict[str, tuple] = OrderedDict()
_PARSED_KEPT = 64


MAX_CST_NESTING = 200  # LibCST's parse time grows steeply with depth: 0.9 s at 800, minutes at 2000


def _nesting(text: str) -> int:
    """How deep `ast` nests the statement (iteratively: the depth is what may be too much)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return 0  # LibCST answers for itself
    deepest, stack = 0, [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _parsed(text: str) -> tuple:
    """Tree and positions of a statement's text, shared by every fix offered for it (trees are
    immutable; parsing with positions costs more than the analysis)."""
    found = _PARSED.get(text)
    if found is None:
        if _nesting(text) > MAX_CST_NESTING:
            raise CannotFix(f"nested more than {MAX_CST_NESTING} deep: LibCST would take minutes on it")
        try:
            wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)  # nobody else has this tree
            found = (wrapper.module, wrapper.resolve(PositionProvider))
        except (cst.ParserSyntaxError, RecursionError, ValueError) as error:
            raise CannotFix(f"LibCST cannot parse it: {error}") from None
        _PARSED[text] = found
        while len(_PARSED) > _PARSED_KEPT:
            _PARSED.popitem(last=False)
    else:
        _PARSED.move_to_end(text)
    return found


class _Apply(cst.CSTTransformer):
    def __init__(self, rewrites: dict[cst.CSTNode, list[Rewrite]]):
        super().__init__()
        self.pending = rewrites

    def on_leave(self, original_node, updated_node):
        for change in self.pending.get(original_node, ()):
            if not isinstance(updated_node, cst.CSTNode):
                break
            updated_node = change(updated_node)
        return updated_node


def expression(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


def code_of(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)
