"""The rule engine: runs the rules over the analysis core's kernel model; sits above both.

`analysis/` builds one model of a module (kernels, launches, values) and knows no rule; every
rule in `rules/` reads that model through a `RuleContext`; this module chooses the rules (select,
ignore), runs them, applies `# noqa`, and checks settings that name rules. The server, the CLI and
the fixes (which re-check what they rewrite) call it; nothing below calls it (docs/architecture.md).

Suppression, as ruff: `# noqa: PAL001` on a finding's first or last line; `# pallas-lsp: noqa` (or
`...: noqa: PAL001`) on a line of its own for the whole file; `per-file-ignores` in `[tool.pallas-lsp]`
for the files its glob patterns match. The file-wide two apply last, to the findings of the whole file
(an incremental re-check keeps the findings before them, so removing such a line brings them back).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from . import config
from .analysis import first_pass, incremental, reads
from .analysis.context import RuleContext
from .analysis.findings import Finding
from .analysis.project import Project
from .analysis.exclusions import Rule
from .analysis.source import file_noqa_codes, noqa_codes, refused_cookie
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
    named = [(key, getattr(settings, key)) for key in ("select", "ignore")]
    named += [(f"per-file-ignores {pattern!r}", codes) for pattern, codes in settings.per_file_ignores.items()]
    for key, codes in named:
        unknown = unknown_codes(codes)
        if unknown:
            raise config.ConfigError(f"{settings.source}: [tool.pallas-lsp] {key}: {unknown_codes_message(unknown)}")
    return settings


def _matches_code(code: str, patterns) -> bool:
    return any(p == "ALL" or code.startswith(p) for p in patterns)


# pyproject.toml path -> ((mtime_ns, size), [(Rule, codes)]): read again when the file changes.
_PER_FILE_IGNORES: dict[str, tuple[tuple[int, int], list]] = {}


def per_file_ignores(project: Project, path: str) -> set[str]:
    """The codes and prefixes `per-file-ignores` of the project's pyproject.toml silences in `path`. A
    pattern is matched as `exclude`'s are (without `/`: a file or folder of that name anywhere; with
    `/`: a path from the pyproject.toml's folder; `!pattern`: every file it does not match).

    First taken from the project's exclusions (read with the rest of the table: a `check` run reads
    its settings once, and its workers get them from the parent); read again when the file changes."""
    pyproject = config.find_pyproject(project.root)
    if pyproject is None:
        return set()
    try:
        stat = pyproject.stat()
    except OSError:
        return set()
    stamp = (stat.st_mtime_ns, stat.st_size)
    cached = _PER_FILE_IGNORES.get(str(pyproject))
    if cached is None or cached[0] != stamp:
        if cached is None:
            table = project.exclusions.per_file_ignores
        else:
            try:
                table = load_settings(str(pyproject.parent)).per_file_ignores
            except config.ConfigError:  # said where the settings are read (check exits 2, the editor shows it)
                table = {}
        cached = _PER_FILE_IGNORES[str(pyproject)] = (stamp, [(Rule(str(pyproject.parent), pattern), codes)
                                                              for pattern, codes in table.items()])
    path = os.path.abspath(path)
    folders = [str(folder) for folder in Path(path).parents]
    silenced: set[str] = set()
    for rule, codes in cached[1]:
        hit = rule.matches(path, False) or any(rule.matches(folder, True) for folder in folders)
        if hit != rule.negated:
            silenced.update(codes)
    return silenced


def file_level_suppression(project: Project, path: str, text: str, findings: list[Finding]) -> list[Finding]:
    """`findings` less those a file-level `# pallas-lsp: noqa` or `per-file-ignores` silences."""
    if not findings:
        return findings
    silenced = per_file_ignores(project, path)
    in_file = file_noqa_codes(text)
    if in_file is not None:
        silenced |= in_file or {"ALL"}
    if not silenced:
        return findings
    return [finding for finding in findings if not _matches_code(finding.code, silenced)]


def analyze(project: Project, path: str, text: str | None = None, codes: set[str] | None = None) -> list[Finding]:
    """Findings for one file (its unsaved `text` if given), sorted, with `# noqa`, a file-level
    `# pallas-lsp: noqa` and `per-file-ignores` applied."""
    findings, model = _analyze_file(project, path, text, codes)
    return file_level_suppression(project, path, model.source.text, findings) if findings else findings


def _analyze_file(project: Project, path: str, text: str | None, codes: set[str] | None):
    """(findings with line `# noqa` applied, the module model: None when there is none).

    A file that cannot have Pallas findings (it never mentions Pallas, `get_global` or a workspace
    module that does) is only compiled, for PAL000: no model, nothing asked of jedi.
    """
    project.new_analysis()
    with project.pinning(path):
        return _analyze(project, path, text, codes)


def _analyze(project: Project, path: str, text: str | None, codes: set[str] | None):
    if not project.can_matter(path, text):
        if codes is not None and "PAL000" not in codes:
            return [], None
        try:
            text = text if text is not None else project.text(path)
            if project.refusal(path, text) is None and refused_cookie(text) is None:
                # as ast.parse, a big data literal's contents left out; kept for a model of it (an importer's)
                project.parsed_tree(path, text)
                return [], None
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
        codes = {"PAL000"}

    model = project.model(path, text)
    findings = model_findings(project, model, codes)
    project.save_caches()
    return findings, model


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
    seen = set()
    for finding in findings:
        key = (finding.code, finding.span, finding.message)
        if key in seen:  # the same code reached by two kernels (a launch's two bodies, `kernel = a if c else b`)
            continue
        seen.add(key)
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
    rule, `RuleContext.isolated` keeps one kernel's failure from the next kernel's findings.) Kept in the
    context, where a later rule may ask for them (`RuleContext.findings_of`)."""
    return ctx.findings_of(rule)


def analyze_incremental(project: Project, path: str, text: str, codes: set[str] | None = None,
                        min_lines: int = incremental.INCREMENTAL_MIN_LINES) -> list[Finding]:
    """`analyze(project, path, text, codes)`, re-running the rules only on what an edit since the last
    call for this path can change (analysis/incremental.py says how); the same findings in every case."""
    path = os.path.abspath(path)
    project.new_analysis()
    with project.pinning(path):
        findings = _analyze_incremental(project, path, text, codes, min_lines)
    return file_level_suppression(project, path, text, findings)


def analyze_before_importers(project: Project, path: str, text: str, codes: set[str] | None = None,
                             min_lines: int = incremental.INCREMENTAL_MIN_LINES) -> tuple[list[Finding], list]:
    """A document's first findings without modelling the kernels of the modules importing it
    (analysis/first_pass.py): (the findings of the rules that did not need them, what was left out: the
    (importer, own-module call sites only) whose kernels they asked for; none when every rule is in).
    Unless none was left out, `analyze_incremental` finds the rest, reusing what this one found
    (`first_pass.model_importer_kernels` first, a step for each, if the analysis thread has requests to take)."""
    path = os.path.abspath(path)
    if not reads.tracking():  # nothing would tell the answers that read the missing importers apart
        return analyze_incremental(project, path, text, codes, min_lines), []
    project.new_analysis()
    deferral = project.deferral = first_pass.Deferral()
    try:
        with project.pinning(path):
            findings = _analyze_incremental(project, path, text, codes, min_lines)
    finally:
        project.deferral = None
        deferral.finish()
    if deferral.used:
        project.incremental.pop(path, None)  # its findings are not all the file's: the next analysis is whole
        complete = deferral.complete_codes()
        findings = [f for f in findings if f.code in complete]
    return file_level_suppression(project, path, text, findings), list(deferral.importers)


def _analyze_incremental(project: Project, path: str, text: str, codes: set[str] | None,
                         min_lines: int) -> list[Finding]:
    """The findings before the file-level suppression (the incremental state keeps them so)."""
    if project.patched_model(path, text):  # the edit was patched into the model kept (`Project.set_text`)
        previous = project.incremental.pop(path, None)
        findings, _ = _analyze(project, path, text, codes)
        incremental.seed(project, path, text, codes, min_lines, findings, previous)  # for an edit it cannot patch
        state = project.incremental.get(path)
        if state is not None and previous is not None:
            state.updates = previous.updates + 1  # one more edit taken without a whole analysis
        return findings
    findings = incremental.update(project, path, text, codes, min_lines, model_findings)
    if findings is None:
        findings, _ = _analyze(project, path, text, codes)
        incremental.seed(project, path, text, codes, min_lines, findings)
    return findings
