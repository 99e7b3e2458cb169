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
    "jax.experimental.pallas.tpu": ("from jax.experimental.pallas import tpu as pltpu", "pltpu"),
}


class Imports:
    """The file's top-level imports, and the lines a fix adds after its leading ones."""

    def __init__(self, model):
        self.tree = model.tree
        self.first_party = _first_party(model)
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

    def _sorted_places(self) -> list[tuple[int, str]] | None:
        """Where isort/ruff would put each added import, as (0-based line to insert before, text), when
        the file's leading imports are sorted their way (sections stdlib, third party, first party;
        in each, `import x` lines before `from x import y`, by module then name); else None."""
        leading = [s for s in self.tree.body if isinstance(s, (ast.Import, ast.ImportFrom))
                   and (s.end_lineno or s.lineno) - 1 <= (self.anchor_line if self.anchor_line is not None else -1)]
        if not leading or any(isinstance(s, ast.ImportFrom) and (s.level or s.module == "__future__") for s in leading):
            return None
        keys = [_sort_key(s, self.first_party) for s in leading]
        if keys != sorted(keys):
            return None
        sections = [key[0] for key in keys]
        for before, after in zip(leading, leading[1:]):  # sections apart, by one blank line each
            gap = after.lineno - (before.end_lineno or before.lineno) - 1
            same = _sort_key(before, self.first_party)[0] == _sort_key(after, self.first_party)[0]
            if gap != (0 if same else 1):
                return None
        places = []
        for text in self.added:
            key = _sort_key(ast.parse(text).body[0], self.first_party)
            later = [s for s, k in zip(leading, keys) if k > key]
            if later and _sort_key(later[0], self.first_party)[0] == key[0]:
                places.append((later[0].lineno - 1, text, ""))  # before the first that sorts after it
            elif key[0] in sections:  # the last of its section
                last = [s for s in leading if _sort_key(s, self.first_party)[0] == key[0]][-1]
                places.append(((last.end_lineno or last.lineno), text, ""))
            elif later:  # a section of its own, before the next one
                places.append((later[0].lineno - 1, text, "blank after"))
            else:  # a section of its own, after the last
                places.append(((leading[-1].end_lineno or leading[-1].lineno), text, "blank before"))
        return places

    def touched_lines(self) -> set[int]:
        """0-based lines of the leading imports the added ones are inserted at or after."""
        places = self._sorted_places() if self.added else None
        if places is None:
            return {self.anchor_line} if self.added and self.anchor_line is not None else set()
        return {line for line, _, _ in places} | {line - 1 for line, _, _ in places}

    def inserted_before(self) -> set[int]:
        """0-based lines the added imports are inserted just before (where isort puts them)."""
        places = self._sorted_places() if self.added else None
        return {line for line, _, _ in places} if places is not None else set()

    def edits(self, path: str, lines: list[str]) -> list[TextEdit]:
        """The added import lines, in the file's line-ending style: where isort would put them in a
        file sorted its way, else together after the leading imports."""
        if not self.added:
            return []
        newline = newline_of(lines)
        places = self._sorted_places()
        if places is not None and all(line < len(lines) for line, _, _ in places):
            grouped: dict[int, str] = {}
            def order(place):
                return place[0], _sort_key(ast.parse(place[1]).body[0], self.first_party)

            for line, text, blank in sorted(places, key=order):
                block = (newline if blank == "blank before" else "") + text + newline + (
                    newline if blank == "blank after" else "")
                grouped[line] = grouped.get(line, "") + block
            return [TextEdit(path, Span(line, 0, line, 0), block) for line, block in sorted(grouped.items())]
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


def _first_party(model) -> frozenset[str]:
    """Top-level module names the file's own folder holds (`helpers/`, `specs.py`): isort's first-party section,
    after the third-party one."""
    import os

    folder = os.path.dirname(getattr(model, "path", "") or "")
    try:
        names = os.listdir(folder) if folder else []
    except OSError:
        return frozenset()
    return frozenset(name[:-3] if name.endswith(".py") else name for name in names
                     if name.endswith(".py") or os.path.isfile(os.path.join(folder, name, "__init__.py")))


def _sort_key(statement, first_party: frozenset[str] = frozenset()) -> tuple:
    """isort's (and ruff's) order of one import statement: section, `from` after plain, module, name."""
    import sys

    if isinstance(statement, ast.Import):
        module, name, is_from = statement.names[0].name, "", 0
    else:
        module, name, is_from = statement.module or "", statement.names[0].name, 1
    top = module.split(".")[0]
    section = 0 if top in sys.stdlib_module_names else 2 if top in first_party else 1
    return section, is_from, module.lower(), name.lower()
