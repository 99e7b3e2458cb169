"""A fix is offered only if it makes the code better: applied to the text and re-analysed, the
files still parse, its finding is gone, no finding is added, and every name it uses is imported
(never a submodule reached through its package, `pl.mosaic_gpu.X`: an AttributeError until
something imports it).
"""

from __future__ import annotations

import ast
import builtins
import os
import re
from collections import Counter

from ..analysis import big_literals
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
# The launch's advice on where to allocate (KernelModel.scratch_advice), which a relaunch changes, each with
# the plain wording it is compared under: "in scratch_types or with pl.run_scoped" and "Use scratch_types of
# plgpu.kernel or pl.run_scoped" read as the advice of a launch with no scratch of its own.
_ADVICE = (
    (re.compile(r"in scratch_\w+ or with pl\.run_scoped"), "with pl.run_scoped"),
    (re.compile(r"Use (?:scratch_\w+ of [\w.]+ or )*pl\.run_scoped(?: \([^)]*lowers no scratch\))?"), "Use pl.run_scoped"),
    # PAL001 of a kernel only interpreted quotes the platform it compiles for as such ("Run the kernel compiled")
    (re.compile(r'^JAX, compiled: "'), 'JAX: "'),
)
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
            self._missing[path] = unimported_names(big_literals.parse(self.text(path)))
        return self._missing[path]


def _kinds(findings: list[Finding]) -> Counter:
    return Counter((f.code, f.message) for f in findings)


def _spanned(text: str, span) -> str:
    lines = text.splitlines(keepends=True)
    if span.line >= len(lines) or span.end_line >= len(lines):
        return ""
    if span.line == span.end_line:
        return lines[span.line][span.column:span.end_column]
    return "".join([lines[span.line][span.column:], *lines[span.line + 1:span.end_line],
                    lines[span.end_line][:span.end_column]])


def _unadvised(message: str) -> str:
    """A message without the launch's advice on where to allocate (KernelModel.scratch_advice)."""
    for advice, plain in _ADVICE:
        message = advice.sub(plain, message)
    return message


def _not_reworded(added: Counter, gone: Counter, befores: list[Finding], afters: list[Finding],
                  before_text: str, after_text: str) -> Counter:
    """`added` less the findings the fix only re-words: one of the same rule, on the same code, saying the same
    but for where to allocate, as a finding it removed (a fix that relaunches a kernel changes that advice in
    the kernel's other findings, "in scratch_types or with pl.run_scoped" for "with pl.run_scoped")."""
    if not added or not gone:
        return added
    gone_at: Counter = Counter()
    unmatched = Counter(gone)
    for finding in befores:
        kind = (finding.code, finding.message)
        if unmatched[kind] > 0:
            unmatched[kind] -= 1
            gone_at[(finding.code, _unadvised(finding.message), _spanned(before_text, finding.span))] += 1
    left = Counter(added)
    for finding in afters:
        kind = (finding.code, finding.message)
        at = (finding.code, _unadvised(finding.message), _spanned(after_text, finding.span))
        if left[kind] > 0 and gone_at[at] > 0 and at[2]:
            left[kind] -= 1
            gone_at[at] -= 1
    return +left


def added_code(reason: str | None) -> str | None:
    """The rule code of the finding a refusal (`check_fix`'s) says the fix would add; None for other reasons."""
    if not reason or not reason.startswith(WOULD_ADD):
        return None
    return reason[len(WOULD_ADD):].split(" ", 1)[0]


def _compiles(tree: ast.Module, path: str) -> bool:
    try:
        compile(tree, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _compiles_before(baseline: Baseline, path: str) -> bool:
    """The file compiled before the fix (a notebook cell's top-level `await` does not: no fix is held to it)."""
    try:
        return _compiles(big_literals.parse(baseline.text(path)), path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def check_fix(project, baseline: Baseline, finding: Finding, fix: Fix) -> str | None:
    """None if `fix` may be offered for `finding`; otherwise why not."""
    paths = list(dict.fromkeys([baseline.path, *(os.path.abspath(e.path) for e in fix.edits)]))
    new_texts: dict[str, str] = {}
    for path in paths:
        edits = [e for e in fix.edits if os.path.abspath(e.path) == path]
        new_texts[path] = apply_edits(baseline.text(path), edits) if edits else baseline.text(path)
    unimported: dict[str, Counter] = {}
    for path, text in new_texts.items():  # the trees are not kept: the analysis below makes its own
        try:
            tree = big_literals.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return f"{os.path.basename(path)} would not parse"
        if not _compiles(tree, path) and _compiles_before(baseline, path):
            # What parses but Python refuses to compile (a keyword given twice: `f(a=1, a=2)`).
            return f"{os.path.basename(path)} would not compile"
        unimported[path] = unimported_names(tree)
    tree = None
    for path, names in unimported.items():
        added = names - baseline.missing(path)
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
        added = _not_reworded(after - expected, expected - after, befores[path], afters[path],
                              baseline.text(path), new_texts[path])
        new = [kind for kind in added if kind != (finding.code, finding.message)]
        if new:
            code, message = new[0]
            return f"{WOULD_ADD}{code} ({message[:80]})"
        if added:
            return "its finding would remain"
    return None
