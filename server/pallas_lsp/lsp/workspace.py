"""`workspace/didChange*`: settings, folders and watched files changed."""

from __future__ import annotations

import logging

from lsprotocol import types

from .convert import uri_to_path
from .settings import Settings
from .initialize import pull_configuration
from .session import Session

log = logging.getLogger(__name__)


def did_change_watched_files(ls: Session, params: types.DidChangeWatchedFilesParams) -> None:
    ls.files_changed([uri_to_path(change.uri) for change in params.changes])


async def did_change_configuration(ls: Session, params: types.DidChangeConfigurationParams) -> None:
    if ls.client_configuration:
        await pull_configuration(ls)
        return
    problems: list[str] = []
    settings = Settings.from_options(params.settings, ls.initial_settings, problems)
    ls.tell_setting_problems(problems)
    ls.configure(settings, [(f.root, f.uri) for f in ls.folders])
    ls.reschedule_all()


async def did_change_workspace_folders(ls: Session, params: types.DidChangeWorkspaceFoldersParams) -> None:
    removed = {uri_to_path(f.uri) for f in params.event.removed}
    folders = [(f.root, f.uri) for f in ls.folders if f.root not in removed]
    folders += [(uri_to_path(f.uri), f.uri) for f in params.event.added]
    per_folder = {f.root: f.editor for f in ls.folders}
    ls.configure(ls.settings, folders, per_folder)
    await pull_configuration(ls)
    ls.reschedule_all()
