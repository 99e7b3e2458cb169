"""The language server object and its wiring: capabilities, which module handles which request or
notification, and `pallas-lsp serve`'s entry point. Nothing else lives here.

Where things are (one module per request or notification family, as ruff's server lays them out):

- session.py        folders, settings, open documents and notebooks, the analysis thread
- diagnostics.py    diagnostics pushed (debounced) and pulled, for files and notebook cells
- initialize.py     `initialize`, `initialized`, the client's configuration
- workspace.py      `workspace/didChange*`: settings, folders, watched files
- text_sync.py      `textDocument/did{Open,Change,Save,Close}`
- notebook_sync.py  `notebookDocument/did{Open,Change,Save,Close}`
- hover.py          `textDocument/hover`, `textDocument/inlayHint`
- code_actions.py   `textDocument/codeAction`, `codeAction/resolve`, the rule-page command
- fix_all.py        `source.fixAll.pallas` and the `pallas.fixAll` command
- code_lens.py      `textDocument/codeLens`
- trace_command.py  the `pallas.trace` command, its diagnostics and traced types
- edits.py          the core's edits as versioned LSP edits; convert.py: positions, diagnostics, URIs
- transport.py, tcp.py, serve_options.py: stdio and `--tcp`; client_log.py, memory.py
"""

from __future__ import annotations

from .. import __version__
from .libraries import quick_lsp_imports

with quick_lsp_imports():  # most of the start: see libraries.py
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer

from . import (code_actions, code_lens, diagnostics, entry_points, fix_all, hover, initialize, notebook_sync,
               text_sync, trace_command, workspace)
from .convert import SOURCE
from .memory import give_big_blocks_back_when_freed
from .notebooks import NOTEBOOK_SYNC
from .session import Session


class PallasServer(Session, LanguageServer):
    """pygls's server holding this client's session (session.py, with its diagnostics: diagnostics.py)."""

    def __init__(self) -> None:
        LanguageServer.__init__(self, "pallas-lsp", __version__, notebook_document_sync=NOTEBOOK_SYNC)
        Session.__init__(self)


server = PallasServer()

# Lifecycle and workspace
server.feature(types.INITIALIZE)(initialize.initialize)
server.feature(types.INITIALIZED)(initialize.initialized)
server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(workspace.did_change_configuration)
server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)(workspace.did_change_workspace_folders)
server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)(workspace.did_change_watched_files)
# Documents and notebooks
server.feature(types.TEXT_DOCUMENT_DID_OPEN)(text_sync.did_open)
server.feature(types.TEXT_DOCUMENT_DID_CHANGE)(text_sync.did_change)
server.feature(types.TEXT_DOCUMENT_DID_SAVE)(text_sync.did_save)
server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(text_sync.did_close)
server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)(notebook_sync.did_open_notebook)
server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)(notebook_sync.did_change_notebook)
server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)(notebook_sync.did_save_notebook)
server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)(notebook_sync.did_close_notebook)
# Language features
server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, types.DiagnosticOptions(
    identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=False))(diagnostics.pull_diagnostics)
server.feature(types.TEXT_DOCUMENT_HOVER)(hover.hover)
server.feature(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=False))(hover.inlay_hint)
server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
    code_action_kinds=[types.CodeActionKind.QuickFix, fix_all.FIX_ALL_KIND], resolve_provider=True))(code_actions.code_action)
server.feature(types.CODE_ACTION_RESOLVE)(code_actions.resolve_code_action)
server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))(code_lens.code_lens)
# Commands
server.command(code_actions.OPEN_RULE_DOCS_COMMAND)(code_actions.open_rule_docs)
server.command(fix_all.FIX_ALL_COMMAND)(fix_all.fix_all_command)
server.command(trace_command.TRACE_COMMAND)(trace_command.trace_command)
trace_command.keep_work_done_tokens(server)
server.with_verdicts = entry_points.with_jax


def main(argv: list[str] | None = None) -> int:
    """`pallas-lsp serve`: stdio, or `--tcp` (tcp.py: token, loopback only, one client)."""
    from ..source_text import quiet_compile_warnings
    from .tcp import serve_command

    quiet_compile_warnings()  # CPython's SyntaxWarnings about users' files never reach stderr
    give_big_blocks_back_when_freed()
    return serve_command(server, argv)
