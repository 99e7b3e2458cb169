"""`textDocument/hover` and `textDocument/inlayHint`: what the analysis (or the last trace) knows at a
position, in words from `analysis/hover.py`."""

from __future__ import annotations

import logging

from lsprotocol import types

from .convert import code_point_column, uri_to_path, utf16_column
from .notebooks import OpenNotebook
from .session import Session
from . import entry_points

log = logging.getLogger(__name__)


async def hover(ls: Session, params: types.HoverParams) -> types.Hover | None:
    from ..analysis.hover import hover_text

    document = ls.readable_document(params.text_document.uri)
    if document is None:
        return None
    lines = document.lines
    line = params.position.line
    if line >= len(lines):
        return None
    column = code_point_column(lines[line], params.position.character)
    notebook = ls.notebook_of_cell(document.uri)
    if notebook is not None:  # asked in a cell: where that is in the notebook's module
        where = notebook.in_module(document.uri, line, column)
        if where is None:
            return None
        document, (line, column) = notebook, where
    traced = entry_points.traced_kernels(ls, document.uri)
    traced_refs = entry_points.traced_refs(ls, uri_to_path(document.uri))
    cells = document.notebook if isinstance(document, OpenNotebook) else None
    # while the analysis thread analyses, a parameter's hover is its last known hint (known_answers.py)
    markdown = ls.known_answers.parameter_hover(uri_to_path(document.uri), document.source, line, column) \
        if notebook is None and ls.known_answers.analysing() else None
    if markdown is None:
        markdown = await ls.on_analysis_thread(document, "hover", lambda project, path, text: hover_text(
            project, path, text, line, column, traced, traced_refs, findings=lambda: ls.findings(path, text, cells)))
    if notebook is None:  # a rule's error JAX contradicts is not shown: said here (entry_points.py)
        why = entry_points.contradicted(ls, uri_to_path(document.uri), document.source, line)
        if why:
            markdown = "\n\n".join([*(["**JAX:** " + text for text in why]), *([markdown] if markdown else [])])
    if markdown is None:
        return None
    if notebook is not None:  # lines it names are the cells' lines
        markdown = notebook.notebook.cell_lines_in(markdown)
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown))


async def inlay_hint(ls: Session, params: types.InlayHintParams) -> list[types.InlayHint] | None:
    """`x_ref: f32[128] smem` after each kernel parameter: what JAX will pass there (setting `inlayHints`)."""
    from ..analysis.hover import inlay_hints

    document = ls.readable_document(params.text_document.uri)
    notebook = ls.notebook_of_cell(document.uri) if document is not None else None
    path = notebook.path if notebook is not None else uri_to_path(document.uri) if document is not None else None
    if document is None or not ls.folder_for(path).settings.inlay_hints:
        return None
    version, lines = document.version, document.lines
    first, count = 0, len(lines)
    if notebook is not None:  # a cell's hints: those of its lines of the notebook's module
        where = notebook.module_range(document.uri)
        if where is None:
            return None
        (first, count), document, version = where, notebook, notebook.version
    traced_refs = entry_points.traced_refs(ls, uri_to_path(document.uri))
    start, end = first + params.range.start.line, first + params.range.end.line
    hints = None
    if notebook is None and ls.known_answers.analysing() and ls.refreshes_inlay_hints():
        hints = ls.known_answers.hints(path, document.source, start, end)  # the last analysis's (known_answers.py)
        if hints is not None:
            ls.refresh_inlay_hints_after_analysis()
    if hints is None:
        def compute(project, path, text):
            found = inlay_hints(project, path, text, start, end, traced_refs)
            if notebook is None:
                ls.known_answers.keep_hints(path, text, start, end, found)
            return found

        hints = await ls.on_analysis_thread(document, "inlay hints", compute, failed=[])
    if not ls.is_current(document, version):
        return None  # edited meanwhile; the client asks again for the new text
    hints = [(line - first, column, label, tooltip) for line, column, label, tooltip in hints if 0 <= line - first < count]
    return [types.InlayHint(
        position=types.Position(line=line, character=utf16_column(lines[line] if line < len(lines) else "", column)),
        label=label, kind=types.InlayHintKind.Type, tooltip=tooltip) for line, column, label, tooltip in hints]
