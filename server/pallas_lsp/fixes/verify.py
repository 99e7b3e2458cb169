"""A fix is offered only if it makes the code better: applied to the text and re-analysed, the
files still parse, its finding is gone, no finding is added, and every name it uses is imported
(never a submodule reached through its package, `pl.mosaic_gpu.X`: an AttributeError until
something imports it).
"""

from __future__ import annotations

import ast
import builtins
import os
from collections import Counter

from ..engine import analyze
from ..analysis.findings import Finding, Fix
from .edits import apply_edits

# Submodules that `import <package>` does not import, so `<alias>.<submodule>` fails until some
# other import loads them (checked with jax 0.12: `hasattr(pl, "mosaic_gpu")` is False after
# `from jax.experimental import pallas as pl`).
LAZY_SUBMODULES = frozenset({
    "jax.experimental.pallas",
    *(f"jax.experimental.pallas.{name}" for name in ("fuser", "mosaic_gpu", "ops", "tpu", "tpu_sc", "triton")),
})
# How check_fix's refusal of a fix that adds a finding begins: "it would add PAL004 (...)".
WOULD_ADD = "it would add "
_BUILTINS = frozenset(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__", "__path__", "__builtins__"}


def unimported_names(tree: ast.Module) -> Counter:
    """Names read but bound nowhere in the module, and `<alias>.<submodule>` reached without importing it."""
    bound: set[str] = set()
    imported_modules: set[str] = set()
    aliases: dict[str, str] = {}
    loads: list[str] = []
    star = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loads.append(node.id) if isinstance(node.ctx, ast.Load) else bound.add(node.id))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                imported_modules.add(alias.name)
                local = alias.asname or alias.name.split(".")[0]
                bound.add(local)
                aliases[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    star = True
                    continue
                dotted = f"{node.module}.{alias.name}" if node.module and not node.level else alias.name
                imported_modules.add(dotted)
                bound.add(alias.asname or alias.name)
                aliases[alias.asname or alias.name] = dotted
    missing: Counter = Counter()
    if not star:  # a star import may bind anything
        missing.update(name for name in loads if name not in bound and name not in _BUILTINS)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            reached = f"{aliases[node.value.id]}.{node.attr}"
            if reached in LAZY_SUBMODULES and reached not in imported_modules:
                missing[f"{node.value.id}.{node.attr}"] += 1
    return missing


class Baseline:
    """The findings and unimported names of the files a fix edits, before it (computed once per text)."""

    def __init__(self, project, model):
        self.project = project
        self.path = model.path
        self.texts: dict[str, str] = {model.path: model.text}
        self._findings: dict[str, list[Finding]] = {}
        self._missing: dict[str, Counter] = {}

    def text(self, path: str) -> str:
        if path not in self.texts:
            self.texts[path] = self.project.text(path)
        return self.texts[path]

    def findings(self, path: str) -> list[Finding]:
        if path not in self._findings:
            self._findings[path] = analyze(self.project, path, self.text(path))
        return self._findings[path]

    def missing(self, path: str) -> Counter:
        if path not in self._missing:
            self._missing[path] = unimported_names(ast.parse(self.text(path)))
        return self._missing[path]


def _kinds(findings: list[Finding]) -> Counter:
    return Counter((f.code, f.message) for f in findings)


def added_code(reason: str | None) -> str | None:
    """The rule code of the finding a refusal (`check_fix`'s) says the fix would add; None for other reasons."""
    if not reason or not reason.startswith(WOULD_ADD):
        return None
    return reason[len(WOULD_ADD):].split(" ", 1)[0]


def check_fix(project, baseline: Baseline, finding: Finding, fix: Fix) -> str | None:
    """None if `fix` may be offered for `finding`; otherwise why not."""
    paths = list(dict.fromkeys([baseline.path, *(os.path.abspath(e.path) for e in fix.edits)]))
    new_texts: dict[str, str] = {}
    for path in paths:
        edits = [e for e in fix.edits if os.path.abspath(e.path) == path]
        new_texts[path] = apply_edits(baseline.text(path), edits) if edits else baseline.text(path)
    trees = {}
    for path, text in new_texts.items():
        try:
            trees[path] = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return f"{os.path.basename(path)} would not parse"
    for path, tree in trees.items():
        added = unimported_names(tree) - baseline.missing(path)
        if added:
            return f"it uses {', '.join(sorted(added))} without importing it"
    befores = {path: baseline.findings(path) for path in paths}  # before the overlays change
    with project.trial(new_texts):
        afters = {path: analyze(project, path, new_texts[path]) for path in paths}
    for path in paths:
        expected = _kinds(befores[path])
        if path == baseline.path:
            expected[(finding.code, finding.message)] -= 1
        after = _kinds(afters[path])
        added = after - expected
        new = [kind for kind in added if kind != (finding.code, finding.message)]
        if new:
            code, message = new[0]
            return f"{WOULD_ADD}{code} ({message[:80]})"
        if added:
            return "its finding would remain"
    return None
