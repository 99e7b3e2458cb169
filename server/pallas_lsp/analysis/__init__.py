"""The analysis core: source text and an environment in, findings out. No LSP types here."""

from __future__ import annotations

import ast
import logging

from .context import RuleContext
from .findings import Finding, Related, Span
from .project import Project
from .source import intern_names_first, noqa_codes, refused_cookie

log = logging.getLogger(__name__)

__all__ = ["Finding", "Related", "Span", "Project", "analyze", "selected_codes", "unknown_codes"]


def selected_codes(select: list[str] | None = None, ignore: list[str] | None = None) -> set[str]:
    """Rule codes enabled by ruff-style select/ignore lists of codes or prefixes (`PAL`, `PAL00`, `ALL`)."""
    from ..rules import RULES_BY_CODE

    def matches(code: str, patterns: list[str]) -> bool:
        return any(p.upper() == "ALL" or code.startswith(p.upper()) for p in patterns)

    codes = {c for c in RULES_BY_CODE if select is None or matches(c, select)}
    return {c for c in codes if not matches(c, ignore or [])}


def unknown_codes(patterns: list[str] | None) -> list[str]:
    """Select/ignore entries that name no rule (`NOPE`, `PAL9`): a typo that would silently turn
    checking off, so callers refuse them (as ruff does)."""
    from ..rules import RULES_BY_CODE

    return [p for p in patterns or [] if p.upper() != "ALL"
            and not any(code.startswith(p.upper()) for code in RULES_BY_CODE)]


def analyze(project: Project, path: str, text: str | None = None, codes: set[str] | None = None) -> list[Finding]:
    """Findings for one file (its unsaved `text` if given), sorted, with `# noqa` applied.

    A file that cannot have Pallas findings (it never mentions Pallas, `get_global` or a workspace
    module that does) is only compiled, for PAL000: no model, nothing asked of jedi.
    """
    if not project.can_matter(path, text):
        if codes is not None and "PAL000" not in codes:
            return []
        try:
            text = text if text is not None else project.text(path)
            intern_names_first(text)
            if project.refusal(path, text) is None and refused_cookie(text) is None:
                ast.parse(text, filename=path)
                return []
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
        codes = {"PAL000"}

    findings = model_findings(project, project.model(path, text), codes)
    project.save_caches()
    return findings


def model_findings(project: Project, model, codes: set[str] | None = None) -> list[Finding]:
    """Every selected rule's findings on one parsed module, sorted, with `# noqa` applied."""
    from ..rules import RULES

    path = model.path
    ctx = RuleContext(project, model)
    findings: list[Finding] = []
    for rule in RULES:
        if codes is not None and rule.CODE not in codes:
            continue
        try:
            findings.extend(rule.check(ctx))
        except RecursionError:
            log.warning("%s: %s gave up on deeply nested code", path, rule.CODE)
    lines = model.source.lines
    kept = []
    for finding in findings:
        silenced = False
        for line in {finding.span.line, finding.span.end_line}:
            codes_on_line = noqa_codes(lines[line]) if line < len(lines) else None
            if codes_on_line is not None and (not codes_on_line or finding.code in codes_on_line):
                silenced = True
        if not silenced:
            kept.append(finding)
    kept.sort(key=Finding.sort_key)
    return kept
