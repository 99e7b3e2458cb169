"""Notebook document sync (LSP 3.17): the code cells are one module, so any edit re-checks every cell."""

from __future__ import annotations

import logging

from lsprotocol import types

from .convert import uri_to_path
from .session import Session
from .trace_command import drop_trace_diagnostics

log = logging.getLogger(__name__)


def did_open_notebook(ls: Session, params: types.DidOpenNotebookDocumentParams) -> None:
    notebook_changed(ls, params.notebook_document.uri)


def did_change_notebook(ls: Session, params: types.DidChangeNotebookDocumentParams) -> None:
    notebook_changed(ls, params.notebook_document.uri)


def notebook_changed(ls: Session, notebook_uri: str) -> None:
    """Any edit re-checks every cell: they are one module (a buffer type changed in one cell clears
    a finding in the next). A trace of the notebook is stale (its results are kept under its URI)."""
    drop_trace_diagnostics(ls, notebook_uri)
    ls.schedule(notebook_uri)


def did_save_notebook(ls: Session, params: types.DidSaveNotebookDocumentParams) -> None:
    ls.files_changed([uri_to_path(params.notebook_document.uri)])  # what was read of the file is stale


def did_close_notebook(ls: Session, params: types.DidCloseNotebookDocumentParams) -> None:
    ls.close_notebook(params.notebook_document.uri, [cell.uri for cell in params.cell_text_documents])
