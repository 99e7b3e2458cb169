"""Names a rewrite needs (`functools.partial`, `jnp`, the Pallas aliases), spelled the file's way.

A module the file already imports is used through its existing alias (`import jax.numpy as np2`
gives `np2.zeros`, `from functools import partial` gives `partial`); otherwise one import line in
the conventional spelling is added after the file's leading imports, once per fix.
"""

from __future__ import annotations

import libcst as cst

from .cst_locate import CstFile

# Conventional spellings for the modules fixes refer to: (statement to add, local name).
_CONVENTIONAL = {
    "functools": ("import functools", "functools"),
    "jax.numpy": ("import jax.numpy as jnp", "jnp"),
    "jax.experimental.pallas": ("from jax.experimental import pallas as pl", "pl"),
    "jax.experimental.pallas.mosaic_gpu": ("from jax.experimental.pallas import mosaic_gpu as plgpu", "plgpu"),
}


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


class Imports:
    """The file's top-level imports, and the lines a fix adds to them."""

    def __init__(self, file: CstFile):
        self.file = file
        self.local: dict[str, str] = {}  # dotted module or object -> local name
        self.bound: set[str] = set()
        self.added: list[str] = []
        self.anchor: cst.CSTNode | None = None  # the last statement of the leading imports
        leading = True
        for statement in file.module.body:
            is_import = False
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Import):
                        is_import = True
                        for alias in small.names:
                            dotted = _dotted(alias.name)
                            if alias.asname is not None:
                                name = alias.asname.name.value
                                self.local.setdefault(dotted, name)
                            else:
                                name = dotted.split(".")[0]
                                self.local.setdefault(name, name)
                            self.bound.add(name)
                    elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                        is_import = True
                        module = ("." * len(small.relative)) + (_dotted(small.module) if small.module else "")
                        for alias in small.names:
                            name = alias.asname.name.value if alias.asname is not None else alias.name.value
                            self.local.setdefault(f"{module}.{alias.name.value}", name)
                            self.bound.add(name)
                    elif isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString) and self.anchor is None:
                        is_import = True  # the module docstring
            if is_import and leading:
                self.anchor = statement
            elif not is_import:
                leading = False

    def name(self, dotted: str) -> str:
        """How to spell `dotted` (a module, or `module.attr`) here, importing it if needed."""
        if dotted in self.local:
            return self.local[dotted]
        module, _, attr = dotted.rpartition(".")
        if module and module in self.local:
            return f"{self.local[module]}.{attr}"
        if dotted == "functools.partial":
            return f"{self.name('functools')}.partial"
        statement, name = _CONVENTIONAL[dotted]
        self.local[dotted] = name
        self.added.append(statement)
        return name

    def commit(self) -> None:
        if not self.added:
            return
        lines = [cst.parse_statement(line + "\n") for line in self.added]
        if self.anchor is None:
            first = self.file.module.body[0] if self.file.module.body else None
            if first is None:
                self.file.rewrite(self.file.module, lambda m: m.with_changes(body=[*lines]))
                return
            self.file.rewrite(first, lambda node: cst.FlattenSentinel([*lines, node]))
        else:
            self.file.rewrite(self.anchor, lambda node: cst.FlattenSentinel([node, *lines]))
