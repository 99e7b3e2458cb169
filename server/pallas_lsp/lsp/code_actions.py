"""`textDocument/codeAction` and `codeAction/resolve`: quick fixes built on request, rule pages, fix-all.

Diagnostics carry only the hash of the text they were reported for (`data.textHash`); the fixes
of the diagnostics a code-action request names (those in its range) are built then, verified, and
kept for that text. A client that resolves code actions (`resolveSupport` for `edit`) gets the
actions without their edits, and the edit of the one it picks from `codeAction/resolve`.
Every rule among the diagnostics also gets an action opening its page (`rule_actions`).
"""

from __future__ import annotations

import logging
from collections import OrderedDict

from lsprotocol import types

from ..analysis import Finding
from ..source_text import split_lines
from .convert import SOURCES, code_point_column, text_hash, uri_to_path
from .edits import edit_bases, workspace_edit
from .fix_all import FIX_ALL_COMMAND, FIX_ALL_KIND, FIX_ALL_TITLE, fix_all_action
from .session import Session
from . import entry_points

log = logging.getLogger(__name__)
_FIXES_KEPT = 64
_fix_cache: "OrderedDict[tuple, tuple]" = OrderedDict()


def _kind_wanted(kind: str, only) -> bool:
    return not only or any(kind == k or kind.startswith(f"{k}.") for k in only)


def _finding_data(finding: Finding) -> dict:
    span = finding.span
    return {"code": finding.code, "message": finding.message,
            "span": [span.line, span.column, span.end_line, span.end_column]}


def _finding_from(path: str, data: dict) -> Finding | None:
    from ..analysis.findings import Span
    from ..rules import RULES_BY_CODE
    from ..trace.jax_findings import CONFIRMED

    try:
        rule = RULES_BY_CODE[str(data["code"])]
        message = str(data["message"])  # a rule's finding JAX confirmed is the rule's finding, and has its fixes
        return Finding(path, Span(*(int(n) for n in data["span"])), rule.CODE, rule.NAME, rule.SEVERITY,
                       message.removesuffix(CONFIRMED))
    except (KeyError, TypeError, ValueError):
        return None


def _diagnostic_finding(path: str, lines: list[str], diagnostic: types.Diagnostic) -> Finding | None:
    """The finding a diagnostic of ours was made from (columns back to code points)."""
    start, end = diagnostic.range.start, diagnostic.range.end

    def column(line: int, character: int) -> int:
        return code_point_column(lines[line] if line < len(lines) else "", character)

    return _finding_from(path, {"code": diagnostic.code, "message": diagnostic.message, "span": [
        start.line, column(start.line, start.character), end.line, column(end.line, end.character)]})


def _fixes(project, finding: Finding, text: str, text_key: str) -> tuple[tuple, dict[str, str]]:
    """The finding's verified fixes for this text, built once (runs on the analysis thread), and
    the texts they were computed from (`edit_bases`)."""
    fixes, _, bases = _fixes_and_reason(project, finding, text, text_key)
    return fixes, bases


def _fixes_and_reason(project, finding: Finding, text: str, text_key: str) -> tuple:
    """(fixes, why there is no rewrite or None, the texts they were computed from), built once for
    this text and built again when another file they edit has changed since."""
    from ..fixes import fixes_and_reason

    key = (finding.path, text_key, finding.code, finding.span, finding.message)
    cached = _fix_cache.get(key)
    if cached is None or edit_bases(project, [e for fix in cached[0] for e in fix.edits]) != cached[2]:
        fixes, reason = fixes_and_reason(project, finding, text)
        _fix_cache[key] = (fixes, reason, edit_bases(project, [e for fix in fixes for e in fix.edits]))
        while len(_fix_cache) > _FIXES_KEPT:
            _fix_cache.popitem(last=False)
    _fix_cache.move_to_end(key)
    return _fix_cache[key]


async def _quick_fixes(ls: Session, uri: str, diagnostics) -> tuple[list[types.CodeAction], bool]:
    """The diagnostics' fixes as actions, and whether any of them is a safe rewrite (fix-all would
    apply something)."""
    document = ls.open_document(uri)
    if document is None:
        return [], False
    version, text = document.version, document.source
    lines = split_lines(text)
    current = text_hash(lines)
    path = uri_to_path(uri)
    notebook = ls.notebook_of_cell(document.uri)
    asked = []
    for diagnostic in diagnostics:
        data = diagnostic.data
        if diagnostic.source not in SOURCES or not isinstance(data, dict) or data.get("textHash") != current:
            continue  # not ours, or for text the editor no longer has (fresh diagnostics are on their way)
        finding = _diagnostic_finding(document.uri if notebook is not None else path, lines, diagnostic)
        if notebook is not None and finding is not None:
            finding = notebook.module_finding(finding)
        if finding is not None:
            asked.append((diagnostic, finding))
    if not asked:
        return [], False
    analysed, fixes_key = document, current
    if notebook is not None:  # fixed in the notebook's module: kept for its text, all cells
        analysed, version, text = notebook, notebook.version, notebook.notebook.module
        fixes_key = text_hash(split_lines(text))
    results = await ls.on_analysis_thread(analysed, "code actions", lambda project, _path, _text: [
        _fixes_and_reason(project, finding, text, fixes_key) for _, finding in asked], failed=[((), None, {}) for _ in asked])
    if not ls.is_current(analysed, version):
        return [], False
    verdicts = [[None] * len(fixes) for fixes, _, _ in results]
    if notebook is None:  # where an entry point reached the kernel, JAX judges each fix (entry_points.py)
        verdicts = [await entry_points.fix_verdicts(ls, path, text, finding, fixes)
                    for (_, finding), (fixes, _, _) in zip(asked, results)]
        if not ls.is_current(analysed, version):
            return [], False
    actions = []
    safe = any(f.kind == "rewrite" and f.safe for fixes, _, _ in results for f in fixes)
    for (diagnostic, finding), (fixes, no_fix_reason, bases), judged in zip(asked, results, verdicts):
        if no_fix_reason is not None and ls.shows_disabled_actions:  # greyed out, with the reason
            actions.append(types.CodeAction(title=f"pallas-lsp ({finding.code}): No automatic fix",
                                            kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                                            disabled=types.CodeActionDisabled(reason=no_fix_reason)))
        for fix, verdict in zip(fixes, judged):
            title = fix.title
            if verdict is not None and verdict.verdict == "rejected":  # never offered; greyed out with JAX's reason
                if ls.shows_disabled_actions:
                    actions.append(types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                                                    disabled=types.CodeActionDisabled(reason=f"JAX rejects the fixed code: {verdict.reason}")))
                continue
            if verdict is not None and verdict.verdict == "accepted":
                from ..trace.fix_verdicts import VERIFIED

                title += VERIFIED
            action = types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                                      is_preferred=fix.preferred or None)
            if ls.resolves_edits:
                action.data = {"uri": uri, "textHash": current, "finding": _finding_data(finding), "title": fix.title}
            else:
                action.edit = workspace_edit(ls, fix.edits, bases)
                if action.edit is None:  # another file it edits changed since: not offered on old text
                    continue
            actions.append(action)
    return actions, safe


OPEN_RULE_DOCS_COMMAND = "pallas.openRuleDocs"


def rule_actions(ls: Session, uri: str, diagnostics, fixable: bool) -> list[types.CodeAction]:
    """After the fixes: "Show documentation for PALxxx" for each rule among the diagnostics, and,
    when one of them has a safe fix (`fixable`), "Fix all pallas-lsp problems" (all safe fixes of
    the file, as `source.fixAll.pallas` applies on save, under the same title), so that both are
    in the quick-fix menu; the fix-all edit is built only when picked."""
    document = ls.open_document(uri)
    current = text_hash(split_lines(document.source)) if document is not None else None
    ours = [d for d in diagnostics if d.source in SOURCES and not (
        isinstance(d.data, dict) and d.data.get("textHash") not in (None, current))]  # not of older text
    actions, documented = [], set()
    for diagnostic in ours:
        href = diagnostic.code_description.href if diagnostic.code_description else None
        if href and diagnostic.code not in documented:
            documented.add(diagnostic.code)
            title = f"Show documentation for {diagnostic.code}"
            actions.append(types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                                            command=types.Command(title=title, command=OPEN_RULE_DOCS_COMMAND, arguments=[href])))
    current_ones = [d for d in ours if isinstance(d.data, dict) and d.data.get("textHash") == current]
    if fixable and current_ones and document is not None:
        actions.append(types.CodeAction(title=FIX_ALL_TITLE, kind=types.CodeActionKind.QuickFix, diagnostics=current_ones,
                                        command=types.Command(title=FIX_ALL_TITLE, command=FIX_ALL_COMMAND,
                                                              arguments=[uri, document.version])))
    return actions


async def open_rule_docs(ls: Session, *arguments):
    """Arguments: [href] (a diagnostic's codeDescription). `window/showDocument` where the client
    supports it (a web page outside the editor, a file inside), else a message with the link."""
    href = arguments[0] if arguments and isinstance(arguments[0], str) else None
    if href is None:
        raise ValueError(f"{OPEN_RULE_DOCS_COMMAND} takes [href]")
    window = ls.client_capabilities.window
    if window is not None and window.show_document is not None and window.show_document.support:
        result = await ls.window_show_document_async(types.ShowDocumentParams(
            uri=href, external=not href.startswith("file:")))
        if result is not None and result.success:
            return None
    ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=f"pallas-lsp: {href}"))
    return None


async def code_action(ls: Session, params: types.CodeActionParams) -> list[types.CodeAction] | None:
    only = params.context.only
    actions = []
    if _kind_wanted(types.CodeActionKind.QuickFix, only):
        fixes, fixable = await _quick_fixes(ls, params.text_document.uri, params.context.diagnostics)
        actions.extend(fixes)
        actions.extend(rule_actions(ls, params.text_document.uri, params.context.diagnostics, fixable))
    if only and _kind_wanted(FIX_ALL_KIND, only):
        everything = await fix_all_action(ls, params.text_document.uri)
        if everything is not None:
            actions.append(everything)
    return actions or None


async def resolve_code_action(ls: Session, action: types.CodeAction) -> types.CodeAction:
    """The edit of a quick fix the user picked (built for the text the action was offered for; an
    action for text the editor no longer has stays without an edit)."""
    data = action.data if isinstance(action.data, dict) else {}
    document = ls.open_document(str(data.get("uri")))
    if document is None or action.edit is not None:
        return action
    version, text = document.version, document.source
    if text_hash(split_lines(text)) != data.get("textHash"):
        return action
    notebook = ls.notebook_of_cell(document.uri)
    # In a cell, the action's finding is the notebook module's (as `_quick_fixes` made it).
    finding = _finding_from(notebook.path if notebook is not None else uri_to_path(document.uri), data.get("finding") or {})
    analysed, fixes_key = document, data["textHash"]
    if notebook is not None and finding is not None:  # the fix of the notebook's module, as in _quick_fixes
        analysed, version, text = notebook, notebook.version, notebook.notebook.module
        fixes_key = text_hash(split_lines(text))
    if finding is None:
        return action
    fixes, bases = await ls.on_analysis_thread(analysed, "code action resolve", lambda project, _path, _text: _fixes(
        project, finding, text, fixes_key), failed=((), {}))
    chosen = next((fix for fix in fixes if fix.title == data.get("title")), None)
    if chosen is not None and ls.is_current(analysed, version):
        action.edit = workspace_edit(ls, chosen.edits, bases)
    return action
