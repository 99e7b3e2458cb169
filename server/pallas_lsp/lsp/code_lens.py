"""`textDocument/codeLens`: "Trace kernel" above each traceable function, and each Mosaic GPU launch's
shared-memory estimate (JAX's figure after a trace)."""

from __future__ import annotations

import logging

from lsprotocol import types

from ..source_text import split_lines
from .convert import line_range
from . import entry_points
from .session import Session
from .trace_command import TRACE_ASKING_TITLE, TRACE_COMMAND

log = logging.getLogger(__name__)


async def code_lens(ls: Session, params: types.CodeLensParams) -> list[types.CodeLens] | None:
    """"Trace kernel" above every launch. Where its arguments are not found the title says so: the trace
    answers ArgsNotFound with `suggested_args`, and the client asks the user and calls again with
    `{"args": ...}` (VS Code: an input box; other clients get a message naming the comment to write).
    Above every Mosaic GPU launch that allocates, its shared-memory estimate (`SMEM 196,608 / 232,448 B`):
    a label, no command to run."""
    from ..analysis.hover import budget_lenses
    from ..trace.entries import entry_functions

    document = ls.readable_document(params.text_document.uri)
    if document is None:
        return None
    version, lines = document.version, split_lines(document.source)
    cell_uri, first, count = document.uri, 0, len(lines)
    notebook = ls.notebook_of_cell(document.uri)
    if notebook is not None:  # a cell's lenses: those on its lines of the notebook's module
        where = notebook.module_range(document.uri)
        if where is None:
            return None
        (first, count), document, version = where, notebook, notebook.version
    entries = await ls.on_analysis_thread(document, "code lens", entry_functions, failed=[])
    traced = entry_points.traced_kernels(ls, document.uri)
    budgets = await ls.on_analysis_thread(
        document, "budget lens", lambda project, path, text: budget_lenses(project, path, text, traced), failed=[])
    if not ls.is_current(document, version):
        return None
    return [types.CodeLens(
        range=line_range(lines, entry.line - first),
        command=types.Command(title="Trace kernel" if entry.args is not None else TRACE_ASKING_TITLE,
                              command=TRACE_COMMAND, arguments=[cell_uri, entry.name]))
        for entry in entries if first <= entry.line < first + count] + [
        types.CodeLens(range=line_range(lines, line - first), command=types.Command(title=title, command=""))
        for line, title in budgets if first <= line < first + count]
