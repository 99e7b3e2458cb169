"""Names a rewrite needs (`functools.partial`, `jnp`, the Pallas aliases), spelled the file's way.

A module the file already imports is used through its existing alias (`import jax.numpy as np2`
gives `np2.zeros`, `from functools import partial` gives `partial`); otherwise one import line in
the conventional spelling is added after the file's leading imports, once per fix.
"""

from __future__ import annotations

import ast

from ..analysis.findings import Span, TextEdit
from .edits import newline_of
from .verify import LAZY_SUBMODULES

# Conventional spellings for the modules fixes refer to: (statement to add, local name).
_CONVENTIONAL = {
    "functools": ("import functools", "functools"),
    "jax.numpy": ("import jax.numpy as jnp", "jnp"),
    "jax.lax": ("from jax import lax", "lax"),
    "jax.experimental.pallas": ("from jax.experimental import pallas as pl", "pl"),
    "jax.experimental.pallas.mosaic_gpu": ("from jax.experimental.pallas import mosaic_gpu as plgpu", "plgpu"),
}


class Imports:
    """The file's top-level imports, and the lines a fix adds after its leading ones."""

    def __init__(self, model):
        self.tree = model.tree
        self.local: dict[str, str] = {}  # dotted module or object -> local name
        self.added: list[str] = []
        self.anchor_line: int | None = None  # 0-based last line of the leading imports (and docstring)
        leading = True
        for index, statement in enumerate(self.tree.body):
            is_import = isinstance(statement, (ast.Import, ast.ImportFrom))
            if isinstance(statement, ast.Import):
                for alias in statement.names:
                    if alias.asname:
                        self.local.setdefault(alias.name, alias.asname)
                    else:
                        self.local.setdefault(alias.name.split(".")[0], alias.name.split(".")[0])
            elif isinstance(statement, ast.ImportFrom):
                module = "." * statement.level + (statement.module or "")
                for alias in statement.names:
                    if alias.name != "*":
                        self.local.setdefault(f"{module}.{alias.name}", alias.asname or alias.name)
            docstring = (index == 0 and isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
                         and isinstance(statement.value.value, str))
            if leading and (is_import or docstring):
                self.anchor_line = (statement.end_lineno or statement.lineno) - 1
            elif not docstring:
                leading = False

    def name(self, dotted: str) -> str:
        """How to spell `dotted` (a module, or `module.attr`) here, importing it if needed."""
        if dotted in self.local:
            return self.local[dotted]
        module, _, attr = dotted.rpartition(".")
        if module and module in self.local and dotted not in LAZY_SUBMODULES:  # never `pl.mosaic_gpu`
            return f"{self.local[module]}.{attr}"
        if dotted == "functools.partial":
            return f"{self.name('functools')}.partial"
        statement, name = _CONVENTIONAL[dotted]
        self.local[dotted] = name
        self.added.append(statement)
        return name

    def edits(self, path: str, lines: list[str]) -> list[TextEdit]:
        """One insertion of the added import lines, in the file's line-ending style."""
        if not self.added:
            return []
        newline = newline_of(lines)
        block = "".join(statement + newline for statement in self.added)
        if self.anchor_line is None:
            first = self.tree.body[0] if self.tree.body else None
            line = (min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", []))]) - 1
                    if first is not None else len(lines))
            return [TextEdit(path, Span(line, 0, line, 0), block)]
        after = self.anchor_line + 1
        if after < len(lines) or (lines and lines[-1].endswith(("\n", "\r"))):
            return [TextEdit(path, Span(after, 0, after, 0), block)]
        end = len(lines[self.anchor_line])  # the imports end the file, without a final newline
        return [TextEdit(path, Span(self.anchor_line, end, self.anchor_line, end), newline + block.rstrip("\r\n"))]
