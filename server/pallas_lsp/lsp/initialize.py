"""`initialize` and `initialized`: the client's capabilities, folders and settings (pulled with
`workspace/configuration` where the client answers it)."""

from __future__ import annotations

import asyncio
import logging
import threading

from lsprotocol import types

from .convert import uri_to_path, use_python_documents
from .settings import Settings
from .client_log import ClientLogHandler
from .session import Session

log = logging.getLogger(__name__)


def initialize(ls: Session, params: types.InitializeParams) -> None:
    use_python_documents(ls.workspace)
    folders = [(uri_to_path(f.uri), f.uri) for f in params.workspace_folders or []]
    if not folders and (params.root_uri or params.root_path):
        root = uri_to_path(params.root_uri) if params.root_uri else params.root_path
        folders = [(root, params.root_uri)]
    capabilities = params.capabilities
    declares_pull = bool(capabilities.text_document and capabilities.text_document.diagnostic)
    can_refresh = bool(capabilities.workspace and capabilities.workspace.diagnostics
                       and capabilities.workspace.diagnostics.refresh_support)
    # Pull only from clients we can ask to pull again (settings change, save, trace results);
    # others (Neovim 0.11) get push, and pull is not advertised, so they see each diagnostic once.
    ls.pull = declares_pull and can_refresh
    if not ls.pull:
        ls.protocol.fm.features.pop(types.TEXT_DOCUMENT_DIAGNOSTIC, None)
    ls.client_configuration = bool(capabilities.workspace and capabilities.workspace.configuration)
    watched = capabilities.workspace.did_change_watched_files if capabilities.workspace else None
    ls.watch_files = bool(watched and watched.dynamic_registration)
    code_action_caps = capabilities.text_document.code_action if capabilities.text_document else None
    resolve = code_action_caps.resolve_support if code_action_caps else None
    ls.resolves_edits = bool(resolve and "edit" in (resolve.properties or []))
    ls.shows_disabled_actions = bool(code_action_caps and code_action_caps.disabled_support)
    ls.loop_thread = threading.get_ident()
    try:
        ls.event_loop = asyncio.get_running_loop()
    except RuntimeError:
        ls.event_loop = None
    handler = ClientLogHandler(ls)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logging.getLogger("pallas_lsp").addHandler(handler)
    from ..checked_values import environment_problems

    problems = environment_problems()
    ls.initial_settings = Settings.from_options(params.initialization_options, problems=problems)
    ls.tell_setting_problems(problems)
    ls.configure(ls.initial_settings, folders)


async def pull_configuration(ls: Session) -> None:
    """Ask the client for section `pallas`, globally and per folder, and rebuild what changed."""
    if not ls.client_configuration:
        return
    folders = [(f.root, f.uri) for f in sorted(ls.folders, key=lambda f: f.root)]
    items = [types.ConfigurationItem(section="pallas")] + [
        types.ConfigurationItem(scope_uri=uri, section="pallas") for _, uri in folders if uri]
    try:
        answers = await asyncio.wait_for(ls.workspace_configuration_async(types.ConfigurationParams(items=items)), 10)
    except Exception as exc:  # a client that fails this request keeps the initialization options
        log.warning("workspace/configuration failed: %s", exc)
        return
    # Each answer is laid over the initialization options, not over the previous answer, so a
    # setting the user clears goes back to its default instead of sticking.
    problems: list[str] = []
    base = Settings.from_options(answers[0] if answers else None, ls.initial_settings, problems)
    per_folder = {}
    scoped = iter(answers[1:] if answers else [])
    for root, uri in folders:
        if uri:
            per_folder[root] = Settings.from_options(next(scoped, None), base, problems)
    ls.tell_setting_problems(problems)
    ls.configure(base, folders, per_folder)
    ls.reschedule_all()


async def initialized(ls: Session, params: types.InitializedParams) -> None:
    try:
        await pull_configuration(ls)
    finally:
        ls.is_configured().set()
    await ls.watch_workspace_files()
