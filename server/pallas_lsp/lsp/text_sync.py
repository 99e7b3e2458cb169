"""Text document sync: `didOpen`, `didChange`, `didSave`, `didClose`. Each schedules diagnostics (diagnostics.py)."""

from __future__ import annotations

import logging

from lsprotocol import types

from .convert import uri_to_path
from . import entry_points
from .session import Session
from .trace_command import drop_trace_diagnostics

log = logging.getLogger(__name__)


def did_open(ls: Session, params: types.DidOpenTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri)


def did_change(ls: Session, params: types.DidChangeTextDocumentParams) -> None:
    drop_trace_diagnostics(ls, params.text_document.uri)
    ls.schedule(params.text_document.uri)


def did_save(ls: Session, params: types.DidSaveTextDocumentParams) -> None:
    if params.text_document.uri.endswith("/pyproject.toml"):
        # [tool.pallas-lsp] may have changed: rebuild the folders' effective settings.
        ls.configure(ls.settings, [(f.root, f.uri) for f in ls.folders], {f.root: f.editor for f in ls.folders})
        ls.reschedule_all()
        return
    # A saved kernel body or helper can change what other open files report.
    ls.files_changed([uri_to_path(params.text_document.uri)])
    entry_points.after_save(ls, params.text_document.uri)  # JAX in the loop, where the user asked for it


def did_close(ls: Session, params: types.DidCloseTextDocumentParams) -> None:
    ls.clear(params.text_document.uri)
