"""The rule engine: runs the rules over the analysis core's kernel model; sits above both.

`analysis/` builds one model of a module (kernels, launches, values) and knows no rule; every
rule in `rules/` reads that model through a `RuleContext`; this module chooses the rules (select,
ignore), runs them, applies `# noqa`, and checks settings that name rules. The server, the CLI and
the fixes (which re-check what they rewrite) call it; nothing below calls it (docs/architecture.md).
"""

from __future__ import annotations

import logging
import os

from . import config
from .analysis import big_literals, incremental
from .analysis.context import RuleContext
from .analysis.findings import Finding
from .analysis.project import Project
from .analysis.source import intern_names_first, noqa_codes, refused_cookie
from .rules import RULES, RULES_BY_CODE

log = logging.getLogger(__name__)


def selected_codes(select: list[str] | None = None, ignore: list[str] | None = None) -> set[str]:
    """Rule codes enabled by ruff-style select/ignore lists of codes or prefixes (`PAL`, `PAL00`, `ALL`)."""
    def matches(code: str, patterns: list[str]) -> bool:
        return any(p.upper() == "ALL" or code.startswith(p.upper()) for p in patterns)

    codes = {c for c in RULES_BY_CODE if select is None or matches(c, select)}
    return {c for c in codes if not matches(c, ignore or [])}


def unknown_codes(patterns: list[str] | None) -> list[str]:
    """Select/ignore entries that name no rule (`NOPE`, `PAL9`): a typo that would silently turn
    checking off, so callers refuse them (as ruff does)."""
    return [p for p in patterns or [] if p.upper() != "ALL"
            and not any(code.startswith(p.upper()) for code in RULES_BY_CODE)]


def unknown_codes_message(unknown: list[str]) -> str:
    return (f"unknown rule code{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
            f"(known: {', '.join(sorted(RULES_BY_CODE))}, their prefixes, ALL)")


def load_settings(start: str, loaded: dict | None = None) -> config.Settings:
    """`config.load_settings`, refusing (`ConfigError`) a `select` or `ignore` that names no rule."""
    settings = config.load_settings(start, loaded)
    for key in ("select", "ignore"):
        unknown = unknown_codes(getattr(settings, key))
        if unknown:
            raise config.ConfigError(f"{settings.source}: [tool.pallas-lsp] {key}: {unknown_codes_message(unknown)}")
    return settings


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
                big_literals.parse(text)
                return []
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
        codes = {"PAL000"}

    findings = model_findings(project, project.model(path, text), codes)
    project.save_caches()
    return findings


def model_findings(project: Project, model, codes: set[str] | None = None) -> list[Finding]:
    """Every selected rule's findings on one parsed module, sorted, with `# noqa` applied."""
    path = model.path
    ctx = RuleContext(project, model)
    findings: list[Finding] = []
    for rule in RULES:
        if codes is None or rule.CODE in codes:
            findings.extend(_rule_findings(rule, ctx))
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


def _rule_findings(rule, ctx: RuleContext) -> list[Finding]:
    """One rule's findings on one module. An exception in it (a bug, or input nothing foresaw) costs only the
    findings it had not given yet, never another rule's: it is logged, and the other rules run. (Inside a
    rule, `RuleContext.isolated` keeps one kernel's failure from the next kernel's findings.)"""
    found: list[Finding] = []
    try:
        for finding in rule.check(ctx):
            found.append(finding)
    except RecursionError:
        log.warning("%s: %s gave up on deeply nested code", ctx.path, rule.CODE)
    except Exception as error:
        log.error("%s: %s failed (%s: %s); the file's other findings are kept", ctx.path, rule.CODE,
                  type(error).__name__, error, exc_info=True)
    return found


def analyze_incremental(project: Project, path: str, text: str, codes: set[str] | None = None,
                        min_lines: int = incremental.INCREMENTAL_MIN_LINES) -> list[Finding]:
    """`analyze(project, path, text, codes)`, re-running the rules only on what an edit since the last
    call for this path can change (analysis/incremental.py says how); the same findings in every case."""
    path = os.path.abspath(path)
    findings = incremental.update(project, path, text, codes, min_lines, model_findings)
    if findings is None:
        findings = analyze(project, path, text, codes)
        incremental.seed(project, path, text, codes, min_lines, findings)
    return findings
