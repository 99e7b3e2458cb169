"""Fix-all: `source.fixAll.pallas` (and on save), and the `pallas.fixAll` command (`workspace/applyEdit`)."""

from __future__ import annotations

import asyncio
import logging
import os

from lsprotocol import types

from ..engine import selected_codes
from .convert import uri_to_path
from .notebooks import OpenNotebook
from .edits import workspace_edit
from .session import Session

log = logging.getLogger(__name__)
FIX_ALL_KIND = "source.fixAll.pallas"
FIX_ALL_COMMAND = "pallas.fixAll"
FIX_ALL_TITLE = "Fix all pallas-lsp problems"
_FIX_ALL_ATTEMPTS = 3  # the user typed meanwhile: computed again on the new text, a few times at most


async def fix_all_action(ls: Session, uri: str) -> types.CodeAction | None:
    """Every safe fix of the document, as one edit of the texts it was computed from; computed again
    when the user typed meanwhile (in this file or another one it edits), never sent for old text."""
    for _ in range(_FIX_ALL_ATTEMPTS):
        notebook = ls.notebook_of_cell(uri)
        if notebook is not None:
            edits, bases = await _notebook_fix_all_edits(ls, notebook)
        else:
            document = ls.open_document(uri)
            if document is None:
                return None
            edits, bases = await _fix_all_edits(ls, uri_to_path(uri), document.source)
        if not edits:
            return None
        edit = workspace_edit(ls, edits, bases)
        if edit is not None:
            return types.CodeAction(title=FIX_ALL_TITLE, kind=FIX_ALL_KIND, edit=edit)
    log.info("fix-all for %s not offered: the text kept changing while it was computed", uri)
    return None


def _changed_files_edits(result, skip: str | None = None) -> list:
    from ..fixes.edits import minimal_edits

    return [edit for changed, new_text in result.texts.items() if changed != skip
            for edit in minimal_edits(changed, result.originals[changed], new_text)]


async def _fix_all_edits(ls: Session, path: str, text: str) -> tuple[list, dict[str, str]]:
    from ..fixes.fix_all import fix_all

    def compute():
        try:
            folder = ls.folder_for(path)
            folder.project.set_text(path, text)
            _sync_open_documents(ls, folder.project)
            result = fix_all(folder.project, path, text,
                             codes=selected_codes(folder.settings.select, folder.settings.ignore))
            return _changed_files_edits(result), dict(result.originals)
        except Exception:
            log.exception("fix-all failed for %s", path)
            return [], {}

    return await asyncio.get_running_loop().run_in_executor(ls.executor, compute)


async def _notebook_fix_all_edits(ls: Session, notebook: OpenNotebook) -> tuple[list, dict[str, str]]:
    """Every safe fix of the notebook (asked in any of its cells), as edits of the cells they change
    (the notebook's own base is its module, checked again by `workspace_edit`)."""
    from ..fixes.edits import minimal_edits
    from ..fixes.fix_all import fix_all

    def compute(project, path, text):
        _sync_open_documents(ls, project)
        settings = ls.folder_for(path).settings
        result = fix_all(project, path, text, codes=selected_codes(settings.select, settings.ignore))
        bases = dict(result.originals)
        bases.setdefault(path, text)
        return result.notebooks.get(path), _changed_files_edits(result, skip=path), bases

    fixed, others, bases = await ls.on_analysis_thread(notebook, "fix-all", compute, failed=(None, [], {}))
    if not ls.is_current(notebook, notebook.version):
        return [], {}
    edits = []
    for cell_uri, before, after in zip(notebook.cell_uris, notebook.notebook.cells, fixed.cells if fixed else ()):
        edits.extend(minimal_edits(cell_uri, before.source, after.source))
        bases[cell_uri] = before.source
    edits.extend(others)  # a kernel body's module, when the launch is in the notebook
    return edits, bases


def _sync_open_documents(ls: Session, project) -> None:
    """Give `project` the editor's text of every open document (analysis thread): a fix reaching
    another open file is then built on what the user sees there, not on its last analysed text."""
    for document in list(ls.workspace.text_documents.values()):
        path = uri_to_path(document.uri)
        if ls.notebook_of_cell(document.uri) is None and ls.folder_for(path).project is project:
            text = document.source
            if project.overlay.get(os.path.abspath(path)) != text and not ls.too_large(path, text):
                project.set_text(path, text)


async def fix_all_command(ls: Session, *arguments):
    """Arguments: [uri, version]. Applies every safe fix of the document (`workspace/applyEdit`);
    nothing when the document changed since the action was offered."""
    uri = arguments[0] if arguments and isinstance(arguments[0], str) else None
    document = ls.open_document(uri) if uri else None
    if document is None:
        raise ValueError(f"{FIX_ALL_COMMAND} takes [uri, version] of an open document")
    if len(arguments) > 1 and arguments[1] is not None and arguments[1] != document.version:
        return None  # offered for older text; the editor asks for fresh actions
    action = await fix_all_action(ls, uri)
    if action is None or action.edit is None:
        return None
    await ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=action.edit, label=FIX_ALL_TITLE))
    return None
