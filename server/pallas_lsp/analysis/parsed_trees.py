"""One parse of a module's text for everything that reads its statements.

A module's import table (`workspace_imports.module_exports`), the syntax check of a file that cannot
matter (`engine`) and its model (`ModuleModel`) each parsed the same text: on tpu-inference a check
parsed 15 million characters for 10.7 million of text (0.4x an `ast.parse` of the tree more). A tree
parsed before its module is modelled is kept here, by path and text, until the model takes it; the
oldest are dropped past a budget (a tree takes ~40 bytes a character: most files whose table is read
are never modelled).
"""

from __future__ import annotations

import ast
from collections import OrderedDict

from . import big_literals
from .source import intern_names_first

# Characters of text whose trees are kept for a model that may come: ~40 MiB of trees.
TREE_TEXT_BUDGET = 1_000_000


class ParsedTrees:
    """Trees parsed whole (`big_literals.parse`) and not modelled yet, least recently parsed first."""

    def __init__(self, budget: int = TREE_TEXT_BUDGET):
        self.budget = budget
        self._trees: OrderedDict[str, tuple[str, ast.Module]] = OrderedDict()
        self._chars = 0

    def tree(self, path: str, text: str) -> ast.Module:
        """`big_literals.parse(text)` (raising what it raises), parsed once while kept."""
        kept = self._trees.get(path)
        if kept is not None and kept[0] == text:
            return kept[1]
        intern_names_first(text)
        tree = big_literals.parse(text)
        self._drop(path)
        if len(text) <= self.budget:
            self._trees[path] = (text, tree)
            self._chars += len(text)
            while self._chars > self.budget:
                self._drop(next(iter(self._trees)))
        return tree

    def take(self, path: str, text: str) -> ast.Module | None:
        """The tree kept of this text, no longer kept (its model holds it now); None when there is none."""
        kept = self._trees.get(path)
        if kept is None or kept[0] != text:
            return None
        self._drop(path)
        return kept[1]

    def _drop(self, path: str) -> None:
        kept = self._trees.pop(path, None)
        if kept is not None:
            self._chars -= len(kept[0])

    def clear(self) -> None:
        self._trees.clear()
        self._chars = 0
