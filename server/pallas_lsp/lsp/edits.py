"""The core's text edits as LSP workspace edits: versioned, and only for the text they were computed from."""

from __future__ import annotations

import logging

from lsprotocol import types

from ..source_text import read_source, split_lines
from .convert import utf16_column
from .session import Session

log = logging.getLogger(__name__)


def _document_lines(ls: Session, path: str) -> tuple[list[str], int | None]:
    """Lines of a file for UTF-16 columns, and its version if the editor has it open."""
    document = ls.open_document_at(path)
    if document is not None:
        return split_lines(document.source), document.version
    try:
        return split_lines(read_source(path)), None
    except OSError:
        return [], None


def edit_bases(project, edits) -> dict[str, str]:
    """The text each file of `edits` had in `project` when they were computed (analysis thread):
    an edit is sent only to a file that still has that text (`workspace_edit`)."""
    bases = {}
    for path in dict.fromkeys(e.path for e in edits):
        try:
            bases[path] = project.text(path)
        except (OSError, ValueError):
            pass  # gone or unreadable: no base, so its edits are never sent
    return bases


def _text_now(ls: Session, path: str) -> str | None:
    """A file's text as the editor has it now (open document, open notebook's cells), else on disk."""
    from ..analysis.notebooks import is_notebook

    document = ls.open_document_at(path)  # a notebook too, as jupyterlab-lsp sends one: Python text
    if document is not None:
        return document.source
    try:
        if is_notebook(path):
            notebook = ls.open_notebook_at(path)
            return (notebook.notebook if notebook is not None else ls.folder_for(path).project.notebook(path)).module
        return read_source(path)
    except (OSError, ValueError):
        return None


def workspace_edit(ls: Session, edits, bases: dict[str, str]) -> types.WorkspaceEdit | None:
    """Versioned `documentChanges`, one per file (version None for files the editor has not open),
    or None when a file's text is no longer the one its edits were computed from (`bases`): the
    user typed meanwhile, and the edit would land in the wrong place. Runs on the event loop with
    no await, so no change can come in between the check and the version it stamps."""
    from ..analysis.findings import TextEdit
    from ..analysis.notebooks import is_notebook

    for path in dict.fromkeys(e.path for e in edits):
        if path not in bases or _text_now(ls, path) != bases[path]:
            log.info("edit for %s dropped: computed for text the editor no longer has", path)
            return None
    for path in {e.path for e in edits if is_notebook(e.path)}:
        notebook = ls.open_notebook_at(path)
        in_cells = notebook.cell_edits(edits) if notebook is not None else None
        edits = in_cells if in_cells is not None else edits
    changes = []
    for path in dict.fromkeys(e.path for e in edits):
        lines, version = _document_lines(ls, path)

        def position(line: int, column: int) -> types.Position:
            text = lines[line] if line < len(lines) else ""
            return types.Position(line=line, character=utf16_column(text, column))

        file_edits: list[TextEdit] = [e for e in edits if e.path == path]
        changes.append(types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=ls.uri_for(path), version=version),
            edits=[types.TextEdit(range=types.Range(start=position(e.span.line, e.span.column),
                                                    end=position(e.span.end_line, e.span.end_column)),
                                  new_text=e.new_text) for e in file_edits]))
    return types.WorkspaceEdit(document_changes=changes)
