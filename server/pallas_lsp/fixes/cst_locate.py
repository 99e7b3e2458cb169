"""Finding, in a LibCST tree, the nodes the `ast`-based analysis talks about, and rewriting them.

The analysis works on `ast` (fast, tolerant); fixes are LibCST rewrites (they keep comments and
formatting). Nodes are matched by their source range. Every change is registered against an
original node and applied in one transformation, so rewrites of nested nodes compose.
"""

from __future__ import annotations

import ast
from collections import OrderedDict
from typing import Callable

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ..analysis.findings import Span

Rewrite = Callable[[cst.CSTNode], "cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel"]


class CstFile:
    """One file's LibCST tree with positions, parents and pending rewrites."""

    def __init__(self, path: str, text: str):
        self.path = path
        self.text = text
        self._parsed = _parsed(text)
        self.module, self.positions = self._parsed[0], self._parsed[1]
        self.rewrites: dict[cst.CSTNode, list[Rewrite]] = {}

    @property
    def parents(self) -> dict:
        """Child -> parent, computed on first use (most fixes never need it)."""
        if not self._parsed[2]:
            stack = [self.module]
            while stack:
                node = stack.pop()
                for child in node.children:
                    self._parsed[2][child] = node
                    stack.append(child)
        return self._parsed[2]

    @classmethod
    def parse(cls, path: str, text: str) -> "CstFile | None":
        try:
            return cls(path, text)
        except (cst.ParserSyntaxError, RecursionError, ValueError):
            return None

    # ---- locating -------------------------------------------------------------------------------

    def span_of(self, node: cst.CSTNode) -> Span:
        where = self.positions[node]
        return Span(where.start.line - 1, where.start.column, where.end.line - 1, where.end.column)

    def find(self, span: Span, kind: type | tuple[type, ...]) -> cst.CSTNode | None:
        """The node of `kind` at `span`: exactly there, else the largest inside it (`ast` counts a
        tuple's parentheses, LibCST may not), else the smallest around it (parentheses the other way)."""
        wanted = ((span.line, span.column), (span.end_line, span.end_column))
        inside, around = [], []
        for node, where in self.positions.items():
            if not isinstance(node, kind):
                continue
            start = (where.start.line - 1, where.start.column)
            end = (where.end.line - 1, where.end.column)
            if (start, end) == wanted:
                return node
            if start >= wanted[0] and end <= wanted[1]:
                inside.append((start, [-end[0], -end[1]], node))
            elif start <= wanted[0] and end >= wanted[1]:
                around.append(((end[0] - start[0], end[1] - start[1]), node))
        if inside:
            inside.sort(key=lambda item: (item[0], item[1]))
            return inside[0][2]
        if around:
            around.sort(key=lambda item: item[0])
            return around[0][1]
        return None

    def find_ast(self, model, node: ast.AST, kind: type | tuple[type, ...]) -> cst.CSTNode | None:
        return self.find(model.source.span(node), kind)

    def function(self, node: ast.AST) -> cst.FunctionDef | None:
        """The `def` of an `ast` function (matched by name and the line of `def`)."""
        for candidate, where in self.positions.items():
            if isinstance(candidate, cst.FunctionDef) and candidate.name.value == getattr(node, "name", None):
                if self.positions[candidate.name].start.line == node.lineno:
                    return candidate
        return None

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(node)

    # ---- rewriting ------------------------------------------------------------------------------

    def rewrite(self, node: cst.CSTNode, change: Rewrite) -> None:
        """Register `change(updated_node)` for `node`; several changes to one node apply in order."""
        self.rewrites.setdefault(node, []).append(change)

    def render(self) -> str:
        if not self.rewrites:
            return self.text
        return self.module.visit(_Apply(self.rewrites)).code


_PARSED: "OrderedDict[str, tuple]" = OrderedDict()
_PARSED_KEPT = 4


def _parsed(text: str) -> tuple:
    """Tree, positions and parents of a text. Parsing with metadata costs far more than the
    analysis; every fix offered for one file version shares one parse (trees are immutable)."""
    found = _PARSED.get(text)
    if found is None:
        wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)  # nobody else has this tree
        found = (wrapper.module, wrapper.resolve(PositionProvider), {})
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
