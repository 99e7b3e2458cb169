"""The language server: translates LSP to the analysis core and back, nothing else.

Analysis runs off the event loop on one worker thread (jedi is not thread-safe), debounced per
document once its first diagnostics are out (an opened document is analysed at once); a result is
published only if its document version is still the newest, so an editor never sees diagnostics
for text it no longer has.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import logging
import os
import threading
from collections import OrderedDict
from urllib.parse import unquote

from . import __version__
from .lsp_libraries import quick_lsp_imports

with quick_lsp_imports():  # most of the start: see lsp_libraries
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer

from .analysis import Finding, Project
from .analysis.environment import EnvironmentError_
from .python_path import resolve_python
from .source_text import MAX_FILE_BYTES, FileTooLarge, read_source, split_lines
from .config import ConfigError
from .config import Settings as FileSettings
from .engine import analyze_incremental, load_settings, selected_codes, unknown_codes, unknown_codes_message
from .lsp_convert import (
    SOURCE,
    code_point_column,
    text_hash,
    expression_range,
    line_range,
    path_uri,
    shown_text,
    to_diagnostic,
    uri_to_path,
    use_python_documents,
    utf16_column,
)
from .lsp_notebooks import NOTEBOOK_SYNC, OpenNotebook
from .lsp_settings import Folder, Settings, effective

log = logging.getLogger(__name__)

_LOG_LEVELS = {"error": logging.ERROR, "warning": logging.WARNING, "info": logging.INFO, "debug": logging.DEBUG}


class ClientLogHandler(logging.Handler):
    """Sends log records to the client's output (`window/logMessage`); never to stdout."""

    def __init__(self, server: "PallasServer"):
        super().__init__()
        self.server = server

    def emit(self, record: logging.LogRecord) -> None:
        kind = {logging.ERROR: types.MessageType.Error, logging.WARNING: types.MessageType.Warning,
                logging.INFO: types.MessageType.Info}.get(record.levelno, types.MessageType.Log)
        try:
            self.server.notify_from_any_thread(self.server.window_log_message,
                                               types.LogMessageParams(type=kind, message=self.format(record)))
        except Exception:  # logging must never take the server down
            pass


class RoutineCancelFilter(logging.Filter):
    """A client cancels requests whose answer is already on its way (VS Code does, on every
    keystroke); pygls warns about each. That is routine, so it is logged only at debug level."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith("Cancel notification for unknown message id"):
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger("pallas_lsp").isEnabledFor(logging.DEBUG)


class InvalidParamsFilter(logging.Filter):
    """A request with bad arguments is the client's mistake, answered with InvalidParams; pygls logs
    each with our own traceback. It is logged as one warning line instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        from pygls.exceptions import JsonRpcInvalidParams

        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, JsonRpcInvalidParams):
            record.msg, record.args = "%s answered InvalidParams: %s", (str(record.msg % record.args)
                                                                        .replace("Exception occurred for ", ""), error.message)
            record.exc_info = record.exc_text = None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


logging.getLogger("pygls.protocol.json_rpc").addFilter(RoutineCancelFilter())
logging.getLogger("pygls.protocol.json_rpc").addFilter(InvalidParamsFilter())


class PallasServer(LanguageServer):
    def __init__(self):
        super().__init__("pallas-lsp", __version__, notebook_document_sync=NOTEBOOK_SYNC)
        self.settings = Settings()  # client-wide: initializationOptions, then global configuration
        self.initial_settings = Settings()  # initializationOptions alone
        self.root: str | None = None
        self.folders: list[Folder] = []
        self.loose: dict[str, Folder] = {}  # files outside every workspace folder, by pyproject root
        self.pull = False
        self.client_configuration = False
        self.resolves_edits = False  # the client resolves a code action's edit (codeAction/resolve)
        self.shows_disabled_actions = False  # the client greys out a code action with `disabled` (LSP 3.16)
        self.loop_thread: int | None = None
        self.event_loop: asyncio.AbstractEventLoop | None = None
        self.configured: asyncio.Event | None = None  # set once the client's configuration is in
        self.executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="pallas-analysis")
        self.pending: dict[str, asyncio.Task] = {}
        self.too_large_said: set[str] = set()  # documents over the size limit, said once while they stay over
        self.published: dict[str, int] = {}  # uri -> newest version published
        self.warned: set[str] = set()  # warnings about settings already shown
        self.setting_problems: set[str] = set()  # bad setting values of the last configuration, shown
        self.trace_diagnostics: dict[str, list[types.Diagnostic]] = {}  # `pallas-trace` results (trace section)
        self.traced_kernels: dict[str, list[dict]] = {}  # uri -> the kernel records of its last trace (hover, lens)
        # JAX's types of kernel refs from the last trace of each uri: {body path: {(first line, name): avals}}
        self.traced_refs: dict[str, dict[str, dict[tuple[int, str], list[str]]]] = {}
        self.watch_files = False  # the client can report file events (didChangeWatchedFiles)
        self.file_events = False  # ... and has been asked to: workspace files are read again only on events
        self.background_queued = False  # `background_work` is waiting on the analysis thread
        # Open notebooks: the diagnostics of each cell, computed once per notebook text (every cell's
        # pull asks for them): uri -> ((version, module text), future of {cell uri: diagnostics}).
        self.notebook_results: dict[str, tuple[tuple, asyncio.Future]] = {}
        # A pull client that has pulled a notebook cell gets cells' diagnostics by pull only (as
        # files); until then they are pushed (VS Code's client pulls for no cell: its tabs hold the
        # notebook, not its cells). Cells pushed a non-empty list, to clear when pulls take over.
        self.pulls_cells = False
        self.pushed_cells: set[str] = set()

    # ---- what the user reads in notifications: never a link or markup from repository text ------------

    def window_show_message(self, params: types.ShowMessageParams) -> None:
        super().window_show_message(types.ShowMessageParams(type=params.type, message=shown_text(params.message)))

    def window_show_message_request_async(self, params: types.ShowMessageRequestParams, *args, **kwargs):
        params = types.ShowMessageRequestParams(type=params.type, message=shown_text(params.message),
                                                actions=params.actions)
        return super().window_show_message_request_async(params, *args, **kwargs)

    # ---- settings and folders -------------------------------------------------------------------

    @property
    def project(self) -> Project | None:
        """The first folder's project (single-root workspaces have just this one)."""
        return self.folders[0].project if self.folders else None

    def make_folder(self, root: str, uri: str | None, editor: Settings,
                    previous: "Folder | None" = None) -> Folder:
        try:
            from_file = load_settings(root)
        except ConfigError as exc:
            self.show_error(f"pallas-lsp: {exc}; using the editor settings and defaults")
            from_file = FileSettings()
        refusal = from_file.refusal_message()
        if editor.python is None and refusal and refusal not in self.warned:
            self.warned.add(refusal)  # once per server, not on every configuration change
            self.show_error(f"pallas-lsp: {refusal}", types.MessageType.Warning)
        editor = self.without_unknown_codes(editor)
        settings = effective(editor, from_file)
        if (previous is not None and previous.settings.python == settings.python
                and previous.project.root == os.path.abspath(root)):
            previous.editor, previous.settings = editor, settings
            if previous.project.platform != (settings.platform or "gpu"):
                previous.project.platform = settings.platform or "gpu"
                previous.project.forget_models()  # kernel models depend on it
            return previous  # same environment: keep the warm jedi state and the open texts
        project = Project(root=root, python=settings.python, platform=settings.platform)
        project.index.trust_events = self.file_events and uri is not None
        project.defer_cache_writes = True  # written by `background_work`, after the diagnostics are out
        if previous is not None:
            project.overlay.update(previous.project.overlay)
        if not os.path.exists(resolve_python(project.python)):  # said at once; a broken one when jedi starts it
            self.environment_failed(project, EnvironmentError_(f"Python environment not found: {project.python}"))
        else:
            project.load_environment_soon(lambda env, error: self.environment_failed(project, error) if error else
                                          log.info("%s: analysing against %s (Python %s)", root, env.executable, env.version))
        return Folder(os.path.abspath(root), uri, editor, settings, project)

    def environment_failed(self, project: Project, error: Exception) -> None:
        project.use_jedi = False
        self.show_error(f"pallas-lsp: {error}. Names are resolved from import statements only until it is fixed.")

    def show_error(self, message: str, kind: types.MessageType = types.MessageType.Error) -> None:
        log.log(logging.ERROR if kind == types.MessageType.Error else logging.WARNING, "%s", message)
        self.notify_from_any_thread(self.window_show_message, types.ShowMessageParams(type=kind, message=message))

    def tell_setting_problems(self, problems: list[str]) -> None:
        """Each bad value (clamped or replaced, see lsp_settings) once per configuration that holds
        it: every folder's answer repeats the global one, and a change re-sends what did not change."""
        fresh = list(dict.fromkeys(problems))
        for message in fresh:
            if message not in self.setting_problems:
                self.show_error(f"pallas-lsp: {message}", types.MessageType.Warning)
        self.setting_problems = set(fresh)

    def without_unknown_codes(self, editor: Settings) -> Settings:
        """Editor `select`/`ignore` naming no rule are a typo that would silently turn checking off:
        say so, and leave that setting unset (pyproject.toml or the default applies)."""
        from dataclasses import replace

        for key in ("select", "ignore"):
            unknown = unknown_codes(getattr(editor, key))
            if unknown:
                self.show_error(f"pallas-lsp: setting pallas.{key}: {unknown_codes_message(unknown)}; "
                                "the setting is ignored until it is fixed")
                editor = replace(editor, **{key: None})
        return editor

    def notify_from_any_thread(self, send, params) -> None:
        """Notifications must be written from the event loop; analysis runs on its own thread."""
        loop = self.event_loop
        if loop is None or threading.get_ident() == self.loop_thread:
            send(params)
            return
        try:
            loop.call_soon_threadsafe(send, params)
        except RuntimeError:  # the loop is closed: the server exited (the client left right after its
            pass  # first diagnostics, while the environment thread still loaded); nobody to tell

    def configure(self, settings: Settings, folders: list[tuple[str, str | None]],
                  per_folder: dict[str, Settings] | None = None) -> None:
        """(Re)build folders from client-wide settings and, where the client gave them, per-folder ones."""
        self.settings = settings
        logging.getLogger("pallas_lsp").setLevel(_LOG_LEVELS[settings.log_level])
        old = {f.root: f for f in self.folders}
        self.folders = [self.make_folder(root, uri, (per_folder or {}).get(root, settings), old.get(os.path.abspath(root)))
                        for root, uri in folders]
        self.folders.sort(key=lambda f: len(f.root), reverse=True)  # innermost folder first
        self.loose.clear()

    def folder_for(self, path: str) -> Folder:
        for folder in self.folders:
            if folder.contains(path):
                return folder
        # A file outside the workspace: its own pyproject.toml folder (or its directory) is its root.
        from .config import find_pyproject

        pyproject = find_pyproject(os.path.dirname(path) or ".")
        root = str(pyproject.parent) if pyproject else (os.path.dirname(path) or os.getcwd())
        if root not in self.loose:
            self.loose[root] = self.make_folder(root, None, self.settings)
        return self.loose[root]

    # ---- analysis -----------------------------------------------------------------------------

    def too_large(self, path: str, text: str) -> bool:
        """A document over `check`'s 5 MB limit is not analysed either (its syntax tree alone would
        take ~40 times its size, at every edit); the user is told once while it stays over."""
        size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        if size <= MAX_FILE_BYTES:
            self.too_large_said.discard(path)
            return False
        if path not in self.too_large_said:
            self.too_large_said.add(path)
            self.show_error(f"pallas-lsp: {os.path.basename(path)}: not analysed: {FileTooLarge(path, size).reason}",
                            types.MessageType.Warning)
        return True

    def findings(self, path: str, text: str, notebook=None) -> list[Finding]:
        """Runs on the analysis thread. A notebook's `text` is the module of its cells (`notebook`)."""
        if self.too_large(path, text):
            return []
        folder = self.folder_for(path)
        if notebook is not None:
            folder.project.set_notebook(path, notebook)
        else:
            folder.project.set_text(path, text)
        codes = selected_codes(folder.settings.select, folder.settings.ignore)
        try:  # a notebook at any size: an edit of a cell re-analyses what its statements reach (bench/notebook_latency.py)
            return analyze_incremental(folder.project, path, text, codes=codes,
                                       **({"min_lines": 0} if notebook is not None else {}))
        except Exception:
            log.exception("analysis failed for %s", path)
            return []
        finally:
            folder.project.drop_models_over_budget(path)  # open or not: parsed again when needed
            if len(text) > folder.project.model_text_budget:
                give_freed_memory_back()  # a big document's model (or an edit's lists of its lines) is gone

    def read_lines(self, path: str) -> list[str]:
        """Lines of another file (open or on disk), for UTF-16 columns of related locations."""
        try:
            return split_lines(self.folder_for(path).project.text(path))
        except Exception:
            return []

    def readable_document(self, uri: str):
        """The open document, or the file on disk; None if neither can be read (a request then gets null)."""
        document = self.workspace.get_text_document(uri)
        try:
            document.source  # noqa: B018 - pygls reads a document that is not open from disk, lazily
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            log.info("cannot read %s: %s", uri, exc)
            return None
        return document

    def open_document(self, uri: str):
        """The open document `uri` names, however the client spelled it (`my%20proj`, `%C3%A9` or
        `é`): pygls keys documents by the percent-decoded URI. `document.uri` keeps the spelling of
        the client's didOpen, the only one a client is sure to match (clients compare URIs as strings)."""
        documents = self.workspace.text_documents
        return documents.get(uri) or documents.get(unquote(uri))

    def open_document_at(self, path: str):
        return self.open_document(path_uri(path))

    def uri_for(self, path: str) -> str:
        """How to name `path` to the client: as it opened it, else the file's URI."""
        document = self.open_document_at(path)
        return document.uri if document is not None else path_uri(path)

    async def on_analysis_thread(self, document, what: str, compute, failed=None):
        """Run `compute(project, path, text)` for a document (or an `OpenNotebook`: its path and the
        module of its cells) off the event loop, with its folder's project; a failure is logged and
        answers `failed`, never an error to the editor."""
        notebook = document if isinstance(document, OpenNotebook) else None
        if notebook is not None:
            path, text = notebook.path, notebook.notebook.module
        else:
            path, text = uri_to_path(document.uri), document.source

        def run():
            if self.too_large(path, text):
                return failed
            try:
                project = self.folder_for(path).project
                if notebook is not None:
                    project.set_notebook(path, notebook.notebook)
                else:
                    project.set_text(path, text)
                return compute(project, path, text)
            except Exception:
                log.exception("%s failed for %s", what, path)
                return failed

        return await asyncio.get_running_loop().run_in_executor(self.executor, run)

    def is_current(self, document, version: int | None) -> bool:
        """False when the editor changed the document while an answer for `version` was computed."""
        if isinstance(document, OpenNotebook):
            current = self.workspace.get_notebook_document(notebook_uri=document.uri)
        else:
            current = self.open_document(document.uri)
        return current is None or current.version == version

    # ---- notebooks (LSP 3.17 notebook documents; the core reads their code cells as one module) -------

    def notebook_of_cell(self, cell_uri: str) -> OpenNotebook | None:
        """The open notebook a cell document belongs to, as the editor has it now."""
        document = self.workspace.get_notebook_document(cell_uri=cell_uri)
        return None if document is None else OpenNotebook(document, self.open_document)

    def open_notebook_at(self, path: str) -> OpenNotebook | None:
        for document in list(self.workspace.notebook_documents.values()):
            if uri_to_path(document.uri) == path:
                return OpenNotebook(document, self.open_document)
        return None

    async def analyse_notebook(self, notebook_uri: str) -> tuple[int | None, dict[str, list[types.Diagnostic]]]:
        """(notebook version, {code cell uri: diagnostics}); every cell is re-checked on any edit,
        since all of them make one module."""
        await self.wait_for_configuration()
        document = self.workspace.get_notebook_document(notebook_uri=notebook_uri)
        if document is None:
            return None, {}
        notebook = OpenNotebook(document, self.open_document)
        key = (notebook.version, notebook.notebook.module)
        cached = self.notebook_results.get(document.uri)
        if cached is None or cached[0] != key:
            cached = (key, asyncio.ensure_future(self._notebook_diagnostics(notebook)))
            self.notebook_results[document.uri] = cached
        return notebook.version, await asyncio.shield(cached[1])

    async def _notebook_diagnostics(self, notebook: OpenNotebook) -> dict[str, list[types.Diagnostic]]:
        findings = await asyncio.get_running_loop().run_in_executor(
            self.executor, self.findings, notebook.path, notebook.notebook.module, notebook.notebook)
        cell_lines = {uri: split_lines(cell.source) for uri, cell in zip(notebook.cell_uris, notebook.notebook.cells)}

        def lines_of(path: str) -> list[str]:
            return cell_lines[path] if path in cell_lines else self.read_lines(path)

        docs_url = self.folder_for(notebook.path).settings.docs_url
        by_cell: dict[str, list[types.Diagnostic]] = {uri: [] for uri in notebook.code_cell_uris()}
        for finding in findings:
            in_cell = notebook.in_cell(finding)
            if in_cell is not None:
                lines = cell_lines[in_cell.path]
                by_cell[in_cell.path].append(to_diagnostic(in_cell, lines, lines_of, docs_url, text_hash(lines), self.uri_for))
        return by_cell

    async def _debounced_notebook_publish(self, notebook_uri: str) -> None:
        try:
            if notebook_uri in self.published:
                await asyncio.sleep(self.settings.debounce_ms / 1000)
            version, by_cell = await self.analyse_notebook(notebook_uri)
        except asyncio.CancelledError:
            return
        document = self.workspace.get_notebook_document(notebook_uri=notebook_uri)
        if document is None or document.version != version:
            return  # closed or edited meanwhile: a newer analysis is on its way
        self.published[notebook_uri] = version
        if self.pulls_cells:  # an edit of one cell may change every other's: the client pulls them again
            self.refresh_pulled()
        else:
            for cell_uri, diagnostics in by_cell.items():
                cell = self.open_document(cell_uri)
                diagnostics = diagnostics + self.trace_diagnostics.get(cell_uri, [])
                self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                    uri=cell_uri, version=cell.version if cell is not None else None, diagnostics=diagnostics))
                (self.pushed_cells.add if diagnostics else self.pushed_cells.discard)(cell_uri)
        self.background_work()

    def cell_pulled(self) -> None:
        """A pull client pulled a cell: from now on it gets cells' diagnostics by pull only, and what
        was pushed to it before is cleared (a client keeps pushed and pulled diagnostics apart, and
        would show both)."""
        if self.pulls_cells:
            return
        self.pulls_cells = True
        for uri in sorted(self.pushed_cells):
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        self.pushed_cells.clear()

    def close_notebook(self, notebook_uri: str, cell_uris: list[str]) -> None:
        task = self.pending.pop(notebook_uri, None)
        if task is not None:
            task.cancel()
        self.published.pop(notebook_uri, None)
        self.notebook_results.pop(notebook_uri, None)
        path = uri_to_path(notebook_uri)
        for folder in [*self.folders, *self.loose.values()]:
            folder.project.set_notebook(path, None)
        if self.pulls_cells:
            return  # the client's pulled diagnostics go with the closed cells
        for uri in cell_uris:  # pushed, pull client or not (see `schedule`)
            self.pushed_cells.discard(uri)
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def is_configured(self) -> asyncio.Event:
        if self.configured is None:
            self.configured = asyncio.Event()
            if not self.client_configuration:
                self.configured.set()
        return self.configured

    async def wait_for_configuration(self) -> None:
        try:  # analyse with the folder's settings, not the defaults used before they arrive
            await asyncio.wait_for(self.is_configured().wait(), 10)
        except asyncio.TimeoutError:
            log.warning("no workspace configuration from the client after 10 s; using initialization options")
            self.configured.set()

    async def analyse_document(self, uri: str) -> tuple[int | None, list[types.Diagnostic]] | None:
        await self.wait_for_configuration()
        document = self.readable_document(uri)
        if document is None:
            return None, []
        version, text = document.version, document.source
        loop = asyncio.get_running_loop()
        findings = await loop.run_in_executor(self.executor, self.findings, uri_to_path(uri), text)
        if not findings:
            return version, []
        lines = split_lines(text)
        path = uri_to_path(uri)
        docs_url = self.folder_for(path).settings.docs_url
        lines_hash = text_hash(lines)
        return version, [to_diagnostic(f, lines, lambda p: lines if p == path else self.read_lines(p), docs_url,
                                       lines_hash, self.uri_for) for f in findings]

    def refresh_pulled(self) -> None:
        """Pull clients (only those declaring refreshSupport get pull) ask again for every document."""
        try:
            self.workspace_diagnostic_refresh(None)
        except Exception:  # a failed refresh leaves the client's next pull to catch up
            log.debug("workspace/diagnostic/refresh failed", exc_info=True)

    def reschedule_all(self) -> None:
        workspace = self.client_capabilities.workspace
        if workspace is not None and workspace.inlay_hint is not None and workspace.inlay_hint.refresh_support:
            try:  # settings changed: `inlayHints` may have been switched
                self.workspace_inlay_hint_refresh(None)
            except Exception:
                log.debug("workspace/inlayHint/refresh failed", exc_info=True)
        for notebook in list(self.workspace.notebook_documents.values()):
            self.schedule(notebook.uri)  # pushed, or the client asked to pull (`pulls_cells`)
        if self.pull:
            self.refresh_pulled()
            return
        for document in list(self.workspace.text_documents.values()):
            self.schedule(document.uri)

    def schedule(self, uri: str) -> None:
        """Diagnostics for an open document, published under the URI it was opened with (a
        notebook's cell: those of every cell of its notebook, pushed also to a client that pulls
        for files until it pulls for a cell: VS Code's client pulls for text documents, never for
        notebook cells; see `cell_pulled`)."""
        publish = self._debounced_publish
        notebook = self.workspace.get_notebook_document(cell_uri=uri) or self.workspace.get_notebook_document(notebook_uri=uri)
        if notebook is not None:
            uri, publish = notebook.uri, self._debounced_notebook_publish
        elif self.pull:
            return
        else:
            document = self.open_document(uri)
            uri = document.uri if document is not None else uri
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()
        self.pending[uri] = asyncio.ensure_future(publish(uri))

    async def _debounced_publish(self, uri: str) -> None:
        try:
            if uri in self.published:  # a document's first diagnostics wait for no burst of edits
                await asyncio.sleep(self.settings.debounce_ms / 1000)
            version, diagnostics = await self.analyse_document(uri)
        except asyncio.CancelledError:
            return
        document = self.open_document(uri)
        if document is None or document.version != version:
            return  # closed or edited meanwhile: a newer analysis is (or will be) on its way
        if version is not None and self.published.get(uri, -1) > version:
            return
        self.published[uri] = version if version is not None else -1
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=version, diagnostics=diagnostics + self.trace_diagnostics.get(uri, [])))
        self.background_work()

    def background_work(self) -> bool:
        """What the diagnostics did not wait for, on the analysis thread between analyses: the rest of
        each folder's import index (a few hundred files per step, so an edit waits for one step at
        most), then the cache files. False when nothing can be queued any more (exiting)."""
        if self.background_queued:
            return True
        self.background_queued = True

        def step():
            self.background_queued = False
            more = False
            for folder in [*self.folders, *self.loose.values()]:
                try:
                    if folder.project.index.complete_some():
                        folder.project.save_caches(now=True)
                    else:
                        more = True
                except Exception:
                    log.exception("background work failed for %s", folder.root)
            if more and not self.background_work():  # the server is exiting: keep what is known
                for folder in [*self.folders, *self.loose.values()]:
                    folder.project.save_caches(now=True)

        try:
            self.executor.submit(step)
        except RuntimeError:  # the interpreter is exiting: nothing more can be queued
            self.background_queued = False
            return False
        return True

    def files_changed(self, paths: list[str]) -> None:
        """Files changed on disk (saved, created, deleted): every folder forgets what it read from
        them (on the analysis thread, which owns the projects), then open documents are analysed again."""
        def forget():
            for folder in [*self.folders, *self.loose.values()]:
                for path in paths:
                    folder.project.file_changed(path)

        self.executor.submit(forget)
        for document in list(self.workspace.text_documents.values()):
            if uri_to_path(document.uri) not in paths:
                self.schedule(document.uri)

    async def watch_workspace_files(self) -> None:
        """Ask the client for events on the workspace's Python files; with them, the import index
        reads a file again only when it changed, instead of checking every file's stamp."""
        if not self.watch_files:
            return
        options = types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern="**/*.py")])
        try:
            await self.client_register_capability_async(types.RegistrationParams(registrations=[types.Registration(
                id="pallas-lsp-python-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options)]))
        except Exception as exc:  # without events, every question checks the files' stamps
            log.info("file watching not available: %s", exc)
            return
        self.file_events = True

        def trust():
            for folder in self.folders:
                folder.project.index.trust_events = True

        self.executor.submit(trust)

    def clear(self, uri: str) -> None:
        """A document closed: its file is what is on disk again. If the editor's text was not the
        file's (closed without saving), the open files that import it are analysed again: a push
        client would otherwise keep showing what the unsaved text gave them."""
        task = self.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        self.published.pop(uri, None)
        path = uri_to_path(uri)
        unsaved = False
        for folder in [*self.folders, *self.loose.values()]:
            overlay = folder.project.overlay.get(os.path.abspath(path))
            if overlay is not None and not unsaved:
                try:
                    unsaved = read_source(path) != overlay
                except (OSError, ValueError):
                    unsaved = True  # gone or unreadable now: what imports it changed too
            folder.project.set_text(path, None)
        if not self.pull:
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        if unsaved:
            self.reschedule_all()


server = PallasServer()


@server.feature(types.INITIALIZE)
def initialize(ls: PallasServer, params: types.InitializeParams) -> None:
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
    from .checked_values import environment_problems

    problems = environment_problems()
    ls.initial_settings = Settings.from_options(params.initialization_options, problems=problems)
    ls.tell_setting_problems(problems)
    ls.configure(ls.initial_settings, folders)


async def pull_configuration(ls: PallasServer) -> None:
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


@server.feature(types.INITIALIZED)
async def initialized(ls: PallasServer, params: types.InitializedParams) -> None:
    try:
        await pull_configuration(ls)
    finally:
        ls.is_configured().set()
    await ls.watch_workspace_files()


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: PallasServer, params: types.DidChangeWatchedFilesParams) -> None:
    ls.files_changed([uri_to_path(change.uri) for change in params.changes])


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: PallasServer, params: types.DidChangeConfigurationParams) -> None:
    if ls.client_configuration:
        await pull_configuration(ls)
        return
    problems: list[str] = []
    settings = Settings.from_options(params.settings, ls.initial_settings, problems)
    ls.tell_setting_problems(problems)
    ls.configure(settings, [(f.root, f.uri) for f in ls.folders])
    ls.reschedule_all()


@server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
async def did_change_workspace_folders(ls: PallasServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    removed = {uri_to_path(f.uri) for f in params.event.removed}
    folders = [(f.root, f.uri) for f in ls.folders if f.root not in removed]
    folders += [(uri_to_path(f.uri), f.uri) for f in params.event.added]
    per_folder = {f.root: f.editor for f in ls.folders}
    ls.configure(ls.settings, folders, per_folder)
    await pull_configuration(ls)
    ls.reschedule_all()


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: PallasServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: PallasServer, params: types.DidChangeTextDocumentParams) -> None:
    drop_trace_diagnostics(ls, params.text_document.uri)
    ls.schedule(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: PallasServer, params: types.DidSaveTextDocumentParams) -> None:
    if params.text_document.uri.endswith("/pyproject.toml"):
        # [tool.pallas-lsp] may have changed: rebuild the folders' effective settings.
        ls.configure(ls.settings, [(f.root, f.uri) for f in ls.folders], {f.root: f.editor for f in ls.folders})
        ls.reschedule_all()
        return
    # A saved kernel body or helper can change what other open files report.
    ls.files_changed([uri_to_path(params.text_document.uri)])


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: PallasServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.clear(params.text_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
def did_open_notebook(ls: PallasServer, params: types.DidOpenNotebookDocumentParams) -> None:
    notebook_changed(ls, params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
def did_change_notebook(ls: PallasServer, params: types.DidChangeNotebookDocumentParams) -> None:
    notebook_changed(ls, params.notebook_document.uri)


def notebook_changed(ls: PallasServer, notebook_uri: str) -> None:
    """Any edit re-checks every cell: they are one module (a buffer type changed in one cell clears
    a finding in the next). A trace of the notebook is stale (its results are kept under its URI)."""
    drop_trace_diagnostics(ls, notebook_uri)
    ls.schedule(notebook_uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
def did_save_notebook(ls: PallasServer, params: types.DidSaveNotebookDocumentParams) -> None:
    ls.files_changed([uri_to_path(params.notebook_document.uri)])  # what was read of the file is stale


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
def did_close_notebook(ls: PallasServer, params: types.DidCloseNotebookDocumentParams) -> None:
    ls.close_notebook(params.notebook_document.uri, [cell.uri for cell in params.cell_text_documents])


@server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC,
                types.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=False))
async def pull_diagnostics(ls: PallasServer, params: types.DocumentDiagnosticParams):
    notebook = ls.workspace.get_notebook_document(cell_uri=params.text_document.uri)
    if notebook is not None:  # a cell: its part of the notebook's diagnostics
        ls.cell_pulled()
        _, by_cell = await ls.analyse_notebook(notebook.uri)
        cell = ls.open_document(params.text_document.uri)
        diagnostics = by_cell.get(cell.uri if cell is not None else params.text_document.uri, [])
    elif params.text_document.uri.startswith("vscode-notebook-cell:"):
        diagnostics = []  # a cell of a notebook not open here (yet): its didOpen asks for a pull again
    else:
        _, diagnostics = await ls.analyse_document(params.text_document.uri)
    ls.background_work()
    return types.RelatedFullDocumentDiagnosticReport(
        items=diagnostics + ls.trace_diagnostics.get(params.text_document.uri, []))


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: PallasServer, params: types.HoverParams) -> types.Hover | None:
    from .analysis.hover import hover_text

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
    traced = ls.traced_kernels.get(document.uri, ())
    traced_refs = traced_refs_of(ls, uri_to_path(document.uri))
    cells = document.notebook if isinstance(document, OpenNotebook) else None
    markdown = await ls.on_analysis_thread(document, "hover", lambda project, path, text: hover_text(
        project, path, text, line, column, traced, traced_refs, findings=lambda: ls.findings(path, text, cells)))
    if markdown is None:
        return None
    if notebook is not None:  # lines it names are the cells' lines
        markdown = notebook.notebook.cell_lines_in(markdown)
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown))


@server.feature(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=False))
async def inlay_hint(ls: PallasServer, params: types.InlayHintParams) -> list[types.InlayHint] | None:
    """`x_ref: f32[128] smem` after each kernel parameter: what JAX will pass there (setting `inlayHints`)."""
    from .analysis.hover import inlay_hints

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
    traced_refs = traced_refs_of(ls, uri_to_path(document.uri))
    hints = await ls.on_analysis_thread(document, "inlay hints", lambda project, path, text: inlay_hints(
        project, path, text, first + params.range.start.line, first + params.range.end.line, traced_refs), failed=[])
    if not ls.is_current(document, version):
        return None  # edited meanwhile; the client asks again for the new text
    hints = [(line - first, column, label, tooltip) for line, column, label, tooltip in hints if 0 <= line - first < count]
    return [types.InlayHint(
        position=types.Position(line=line, character=utf16_column(lines[line] if line < len(lines) else "", column)),
        label=label, kind=types.InlayHintKind.Type, tooltip=tooltip) for line, column, label, tooltip in hints]


# ---- code actions: quick fixes built on request, and fix-all ---------------------------------------
# Diagnostics carry only the hash of the text they were reported for (`data.textHash`); the fixes
# of the diagnostics a code-action request names (those in its range) are built then, verified, and
# kept for that text. A client that resolves code actions (`resolveSupport` for `edit`) gets the
# actions without their edits, and the edit of the one it picks from `codeAction/resolve`.
# Every rule among the diagnostics also gets an action opening its page (`_rule_actions`).

FIX_ALL_KIND = "source.fixAll.pallas"
_FIXES_KEPT = 64
_fix_cache: "OrderedDict[tuple, tuple]" = OrderedDict()


def _kind_wanted(kind: str, only) -> bool:
    return not only or any(kind == k or kind.startswith(f"{k}.") for k in only)


def _document_lines(ls: PallasServer, path: str) -> tuple[list[str], int | None]:
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


def _text_now(ls: PallasServer, path: str) -> str | None:
    """A file's text as the editor has it now (open document, open notebook's cells), else on disk."""
    from .analysis.notebooks import is_notebook

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


def workspace_edit(ls: PallasServer, edits, bases: dict[str, str]) -> types.WorkspaceEdit | None:
    """Versioned `documentChanges`, one per file (version None for files the editor has not open),
    or None when a file's text is no longer the one its edits were computed from (`bases`): the
    user typed meanwhile, and the edit would land in the wrong place. Runs on the event loop with
    no await, so no change can come in between the check and the version it stamps."""
    from .analysis.findings import TextEdit
    from .analysis.notebooks import is_notebook

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


def _finding_data(finding: Finding) -> dict:
    span = finding.span
    return {"code": finding.code, "message": finding.message,
            "span": [span.line, span.column, span.end_line, span.end_column]}


def _finding_from(path: str, data: dict) -> Finding | None:
    from .analysis.findings import Span
    from .rules import RULES_BY_CODE

    try:
        rule = RULES_BY_CODE[str(data["code"])]
        return Finding(path, Span(*(int(n) for n in data["span"])), rule.CODE, rule.NAME, rule.SEVERITY,
                       str(data["message"]))
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
    from .fixes import fixes_and_reason

    key = (finding.path, text_key, finding.code, finding.span, finding.message)
    cached = _fix_cache.get(key)
    if cached is None or edit_bases(project, [e for fix in cached[0] for e in fix.edits]) != cached[2]:
        fixes, reason = fixes_and_reason(project, finding, text)
        _fix_cache[key] = (fixes, reason, edit_bases(project, [e for fix in fixes for e in fix.edits]))
        while len(_fix_cache) > _FIXES_KEPT:
            _fix_cache.popitem(last=False)
    _fix_cache.move_to_end(key)
    return _fix_cache[key]


async def _quick_fixes(ls: PallasServer, uri: str, diagnostics) -> tuple[list[types.CodeAction], bool]:
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
        if diagnostic.source != SOURCE or not isinstance(data, dict) or data.get("textHash") != current:
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
    actions = []
    safe = any(f.kind == "rewrite" and f.safe for fixes, _, _ in results for f in fixes)
    for (diagnostic, finding), (fixes, no_fix_reason, bases) in zip(asked, results):
        if no_fix_reason is not None and ls.shows_disabled_actions:  # greyed out, with the reason
            actions.append(types.CodeAction(title=f"pallas-lsp ({finding.code}): No automatic fix",
                                            kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                                            disabled=types.CodeActionDisabled(reason=no_fix_reason)))
        for fix in fixes:
            action = types.CodeAction(title=fix.title, kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                                      is_preferred=fix.preferred or None)
            if ls.resolves_edits:
                action.data = {"uri": uri, "textHash": current, "finding": _finding_data(finding), "title": fix.title}
            else:
                action.edit = workspace_edit(ls, fix.edits, bases)
                if action.edit is None:  # another file it edits changed since: not offered on old text
                    continue
            actions.append(action)
    return actions, safe


_FIX_ALL_ATTEMPTS = 3  # the user typed meanwhile: computed again on the new text, a few times at most


async def _fix_all_action(ls: PallasServer, uri: str) -> types.CodeAction | None:
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
    from .fixes.edits import minimal_edits

    return [edit for changed, new_text in result.texts.items() if changed != skip
            for edit in minimal_edits(changed, result.originals[changed], new_text)]


async def _fix_all_edits(ls: PallasServer, path: str, text: str) -> tuple[list, dict[str, str]]:
    from .fixes.fix_all import fix_all

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


async def _notebook_fix_all_edits(ls: PallasServer, notebook: OpenNotebook) -> tuple[list, dict[str, str]]:
    """Every safe fix of the notebook (asked in any of its cells), as edits of the cells they change
    (the notebook's own base is its module, checked again by `workspace_edit`)."""
    from .fixes.edits import minimal_edits
    from .fixes.fix_all import fix_all

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


def _sync_open_documents(ls: PallasServer, project) -> None:
    """Give `project` the editor's text of every open document (analysis thread): a fix reaching
    another open file is then built on what the user sees there, not on its last analysed text."""
    for document in list(ls.workspace.text_documents.values()):
        path = uri_to_path(document.uri)
        if ls.notebook_of_cell(document.uri) is None and ls.folder_for(path).project is project:
            text = document.source
            if project.overlay.get(os.path.abspath(path)) != text and not ls.too_large(path, text):
                project.set_text(path, text)


OPEN_RULE_DOCS_COMMAND = "pallas.openRuleDocs"
FIX_ALL_COMMAND = "pallas.fixAll"
FIX_ALL_TITLE = "Fix all pallas-lsp problems"


def _rule_actions(ls: PallasServer, uri: str, diagnostics, fixable: bool) -> list[types.CodeAction]:
    """After the fixes: "Show documentation for PALxxx" for each rule among the diagnostics, and,
    when one of them has a safe fix (`fixable`), "Fix all pallas-lsp problems" (all safe fixes of
    the file, as `source.fixAll.pallas` applies on save, under the same title), so that both are
    in the quick-fix menu; the fix-all edit is built only when picked."""
    document = ls.open_document(uri)
    current = text_hash(split_lines(document.source)) if document is not None else None
    ours = [d for d in diagnostics if d.source == SOURCE and not (
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


@server.command(FIX_ALL_COMMAND)
async def fix_all_command(ls: PallasServer, *arguments):
    """Arguments: [uri, version]. Applies every safe fix of the document (`workspace/applyEdit`);
    nothing when the document changed since the action was offered."""
    uri = arguments[0] if arguments and isinstance(arguments[0], str) else None
    document = ls.open_document(uri) if uri else None
    if document is None:
        raise ValueError(f"{FIX_ALL_COMMAND} takes [uri, version] of an open document")
    if len(arguments) > 1 and arguments[1] is not None and arguments[1] != document.version:
        return None  # offered for older text; the editor asks for fresh actions
    action = await _fix_all_action(ls, uri)
    if action is None or action.edit is None:
        return None
    await ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=action.edit, label=FIX_ALL_TITLE))
    return None


@server.command(OPEN_RULE_DOCS_COMMAND)
async def open_rule_docs(ls: PallasServer, *arguments):
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


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND],
                                        resolve_provider=True))
async def code_action(ls: PallasServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
    only = params.context.only
    actions = []
    if _kind_wanted(types.CodeActionKind.QuickFix, only):
        fixes, fixable = await _quick_fixes(ls, params.text_document.uri, params.context.diagnostics)
        actions.extend(fixes)
        actions.extend(_rule_actions(ls, params.text_document.uri, params.context.diagnostics, fixable))
    if only and _kind_wanted(FIX_ALL_KIND, only):
        fix_all_action = await _fix_all_action(ls, params.text_document.uri)
        if fix_all_action is not None:
            actions.append(fix_all_action)
    return actions or None


@server.feature(types.CODE_ACTION_RESOLVE)
async def resolve_code_action(ls: PallasServer, action: types.CodeAction) -> types.CodeAction:
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


def main(argv: list[str] | None = None) -> int:
    """`pallas-lsp serve`: stdio, or `--tcp` (lsp_tcp.py: token, loopback only, one client)."""
    from .lsp_tcp import serve_command

    give_big_blocks_back_when_freed()
    return serve_command(server, argv)


def give_big_blocks_back_when_freed() -> None:
    """glibc raises its mmap threshold each time a big block is freed, so the next big strings (a
    document's whole text, made again at every edit) come from the heap and their memory stays with
    the process; a fixed threshold gives each back when freed (a 5.6 MB document after ten edits:
    +27 MiB -> +11 MiB). Elsewhere (no glibc) nothing changes."""
    import ctypes

    try:
        ctypes.CDLL(None).mallopt(-3, 128 * 1024)  # M_MMAP_THRESHOLD, glibc's default value, now fixed
    except (OSError, AttributeError):
        pass


def give_freed_memory_back() -> None:
    """After a big document's whole model is dropped: the heap's free pages go back to the system
    (glibc keeps them otherwise; a 5 MB module's model is ~400 MiB). No-op without glibc."""
    import ctypes

    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


# ==== trace (issue 5): `pallas.trace`, the "Trace kernel" code lens, `pallas-trace` diagnostics ======
# Tracing executes the user's code, so it runs only on an explicit request (this command, or the
# lens that invokes it), never on open or save. The work happens in pallas_lsp.trace (a warm
# worker process per interpreter); these handlers only translate between it and LSP.
# Results are kept in `ls.trace_diagnostics` (uri -> diagnostics), apart from the static ones;
# `_debounced_publish` and `pull_diagnostics` append them, and an edit of a document drops them.

TRACE_COMMAND = "pallas.trace"
TRACE_SOURCE = "pallas-trace"
TOOL_STAGES = ("args", "worker")  # failures before JAX had its say: not the code's problem
_trace_pool = None
_trace_executor = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="pallas-trace")
_trace_origins: dict[str, set[str]] = {}  # traced uri -> uris its diagnostics were put on


_client_progress_token = contextvars.ContextVar("pallas_trace_work_done_token", default=None)


def _keep_work_done_tokens() -> None:
    """pygls hands command handlers only the arguments; a client that sent its own `workDoneToken`
    (VS Code does) should see the trace's progress there, so the token is kept in the request's context."""
    features = getattr(server.protocol.fm, "builtin_features", None)
    builtin = features.get(types.WORKSPACE_EXECUTE_COMMAND) if isinstance(features, dict) else None
    if builtin is None:
        return

    def execute_command(params: types.ExecuteCommandParams):
        _client_progress_token.set(getattr(params, "work_done_token", None))
        return (yield from builtin(params))

    features[types.WORKSPACE_EXECUTE_COMMAND] = execute_command


_keep_work_done_tokens()


def trace_pool():
    global _trace_pool
    if _trace_pool is None:
        import atexit

        from .trace.worker import WorkerPool

        _trace_pool = WorkerPool()
        atexit.register(_trace_pool.shutdown)
    return _trace_pool


def _trace_timeout(ls: PallasServer, folder) -> float:
    for settings in (getattr(folder, "settings", None), getattr(ls, "settings", None)):
        value = getattr(settings, "trace_timeout", None)
        if isinstance(value, (int, float)) and value > 0:
            return float(value)
    return 120.0


def _trace_lines(path: str) -> list[str]:
    document = server.open_document_at(path)
    if document is not None:
        return split_lines(document.source)
    try:
        return split_lines(read_source(path))
    except OSError:
        return []


def trace_result_diagnostics(result: dict, traced_path: str, definition: int | None,
                             notebook: OpenNotebook | None = None) -> dict[str, list[types.Diagnostic]]:
    """Diagnostics, by uri, only where JAX rejected the code: on every line it blamed (or on the
    traced definition when it blamed none). A trace that JAX accepted, and a failure of the tool
    (no arguments, no worker, a timeout) are not problems of the code: they get none. A trace of
    a `notebook`'s cells: locations with a `cell` (trace/notebooks.py) go on that cell's URI, and
    `definition` is a line of its module."""
    error = result.get("error")
    if not error or error.get("stage") in TOOL_STAGES:
        return {}
    by_path: dict[str, list[types.Diagnostic]] = {}

    def add(path: str, line: int, location: dict | None = None, cell: int | None = None) -> None:
        if cell is not None:  # 0-based among the notebook's cells: keyed by its URI (`uri_for` keeps it)
            path, lines = notebook.cell_uris[cell], split_lines(notebook.notebook.cells[cell].source)
        else:
            lines = _trace_lines(path)
        by_path.setdefault(path, []).append(types.Diagnostic(
            range=expression_range(lines, location) or line_range(lines, line), message=message,
            severity=types.DiagnosticSeverity.Error, code=error.get("type"), source=TRACE_SOURCE))

    platform = result.get("lowering_platform") or result.get("platform")
    message = (f"{error.get('type')}: {error.get('message')} "
               f"(JAX {result.get('jax')}, {error.get('stage')} for {platform})")
    locations = [loc for loc in error.get("locations") or [] if loc.get("path") and loc.get("line")]
    for loc in locations:
        cell = loc.get("cell") - 1 if notebook is not None and isinstance(loc.get("cell"), int) else None
        add(os.path.realpath(loc["path"]), int(loc["line"]) - 1, loc, cell)
    if not locations and definition is not None:
        where = notebook.notebook.to_cell(definition, 0) if notebook is not None else None
        add(traced_path, where[1] if where else definition, cell=where[0] if where else None)
    return {path if path in (notebook.cell_uris if notebook else ()) else server.uri_for(path): diagnostics
            for path, diagnostics in by_path.items()}


def trace_result_message(result: dict, function: str, definition: int | None) -> types.ShowMessageParams:
    """The trace's outcome for an editor that has no report view of its own (Neovim, Emacs)."""
    from .trace.report import kernel_summary

    error = result.get("error") or {}
    platform = result.get("lowering_platform") or result.get("platform")
    # What was chosen for the user: the launch of a body they asked about, the host for interpret mode.
    chosen = [note for note in (result.get("traced_because"),
                                f"platform {result.get('platform_reason')}" if result.get("platform") == "host"
                                and result.get("platform_reason") else None) if note]
    why = f" ({'; '.join(chosen)})" if chosen else ""
    if result.get("ok"):
        what = "lowered and compiled" if result.get("compiled") else "lowered"
        kernels = "; ".join(f"kernel {k.get('name')}: {kernel_summary(k)}" for k in result.get("kernels") or [])
        return types.ShowMessageParams(type=types.MessageType.Info, message=(
            f"pallas-trace: {function}: JAX {result.get('jax')} {what} it for {platform}" + (f": {kernels}" if kernels else "")
            + why))
    if error.get("type") == "ArgsNotFound":
        example = result.get("suggested_args") or "f32[128,128], i32[8]"
        where = f" above line {definition + 1}" if definition is not None else ""
        return types.ShowMessageParams(type=types.MessageType.Warning, message=(
            f"pallas-trace: {function}: the arguments to trace it with are not known. Write "
            f"'# pallas-lsp: trace({example})'{where} with the shapes and dtypes it is called with, then trace again."))
    if error.get("stage") in TOOL_STAGES:
        return types.ShowMessageParams(type=types.MessageType.Warning, message=(
            f"pallas-trace: {function} was not traced: {error.get('message')}"))
    return types.ShowMessageParams(type=types.MessageType.Error, message=(
        f"pallas-trace: {function}: JAX {result.get('jax')} rejected it ({error.get('stage')} for {platform}): "
        f"{error.get('type')}: {error.get('message')}{why}"))


def _republish(ls: PallasServer, uris) -> None:
    cells = {uri for uri in uris if ls.workspace.get_notebook_document(cell_uri=uri) is not None}
    for cell in cells:  # pushed, or pulled again (`_debounced_notebook_publish`)
        ls.schedule(cell)
    uris = set(uris) - cells
    if not uris:
        return  # nothing changed: a refresh would make pull clients ask again on every keystroke
    if ls.pull:
        ls.refresh_pulled()
        return
    for uri in uris:
        if ls.open_document(uri) is not None:
            ls.schedule(uri)  # static + trace diagnostics, merged in _debounced_publish
        else:
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=uri, diagnostics=list(ls.trace_diagnostics.get(uri, []))))


def drop_trace_diagnostics(ls: PallasServer, uri: str) -> None:
    """An edit makes a trace stale: drop what it put on this document and what a trace of it put elsewhere,
    and the traced types of the kernels it traced or that are defined in it."""
    affected = {uri} | _trace_origins.pop(uri, set())
    ls.traced_kernels.pop(uri, None)
    dropped = {u for u in affected if ls.trace_diagnostics.pop(u, None) is not None}
    path = os.path.realpath(uri_to_path(uri))
    for origin in [o for o, refs in ls.traced_refs.items() if o == uri or path in refs]:
        del ls.traced_refs[origin]
    _republish(ls, dropped - {uri})  # `uri` itself is re-published by the edit's own analysis


def remember_traced_refs(ls: PallasServer, uri: str, result: dict) -> None:
    """Keep what the trace found each kernel body's refs to be (the worker's `kernel_refs`), for hovers
    and inlay hints until the traced file or the body's file changes; ask the client for new hints."""
    found: dict[str, dict[tuple[int, str], list[str]]] = {}
    for ref in result.get("kernel_refs") or []:
        seen = found.setdefault(ref["path"], {}).setdefault((ref["line"], ref["name"]), [])
        if ref["aval"] not in seen:
            seen.append(ref["aval"])
    if found:
        ls.traced_refs[uri] = found
    else:
        ls.traced_refs.pop(uri, None)
    workspace = ls.client_capabilities.workspace
    if found and workspace is not None and workspace.inlay_hint is not None and workspace.inlay_hint.refresh_support:
        try:
            ls.workspace_inlay_hint_refresh(None)
        except Exception:
            log.debug("workspace/inlayHint/refresh failed", exc_info=True)


def traced_refs_of(ls: PallasServer, path: str) -> dict[tuple[int, str], list[str]]:
    """The traced types of the kernel bodies defined in `path`, from every trace still current."""
    path = os.path.realpath(path)
    merged: dict[tuple[int, str], list[str]] = {}
    for refs in ls.traced_refs.values():
        for key, avals in refs.get(path, {}).items():
            merged.setdefault(key, []).extend(a for a in avals if a not in merged.get(key, []))
    return merged


def _refresh_code_lenses(ls: PallasServer) -> None:
    """Ask a client that can be asked (`workspace/codeLens/refresh`) to fetch its code lenses again."""
    workspace = ls.client_capabilities.workspace
    if workspace is not None and workspace.code_lens is not None and workspace.code_lens.refresh_support:
        ls.workspace_code_lens_refresh(None)


TRACE_ASKING_TITLE = "Trace kernel (arguments?)"
TRACE_USAGE = "pallas.trace takes [file URI, function name or {line, character}, options?]"
TRACE_OPTIONS = {"args": str, "platform": str, "compile": bool}
LSP_UINTEGER_MAX = 2**31 - 1


def _trace_arguments(arguments) -> tuple[str, str | int, dict]:
    """The command's arguments, checked: (path, function name or 0-based line, options). Anything
    else is the client's mistake and gets InvalidParams with one line saying which, never a traceback."""
    from pygls.exceptions import JsonRpcInvalidParams
    from urllib.parse import urlparse

    from .trace import PLATFORMS

    def invalid(why: str) -> JsonRpcInvalidParams:
        return JsonRpcInvalidParams(f"{TRACE_USAGE}: {why}")

    if len(arguments) not in (2, 3):
        raise invalid(f"got {len(arguments)} argument{'s' if len(arguments) != 1 else ''}")
    uri, where, *rest = arguments
    if not isinstance(uri, str):
        raise invalid(f"the URI is {_json_type(uri)}, not a string")
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        raise invalid(f"not a local file URI: {_clip(uri)}")
    path = uri_to_path(uri)
    if "\0" in path or not parsed.path:
        raise invalid(f"not a file path: {_clip(uri)}")
    if isinstance(where, str):
        if not all(part.isidentifier() for part in where.split(".")):
            raise invalid(f"not a Python function name: {_clip(where)}")
    elif isinstance(where, dict):
        for key in ("line", "character"):
            value = where.get(key, 0)
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= LSP_UINTEGER_MAX:
                raise invalid(f"the position's {key} is not an integer from 0 to {LSP_UINTEGER_MAX}: {_clip(value)}")
        if "line" not in where:
            raise invalid("the position has no line")
        where = where["line"]
    else:
        raise invalid(f"the function is {_json_type(where)}, neither a name nor a position")
    options = rest[0] if rest else {}
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise invalid(f"the options are {_json_type(options)}, not an object")
    for key, value in options.items():
        wanted = TRACE_OPTIONS.get(key)
        if wanted is None:
            raise invalid(f"unknown option {_clip(key)} (known: {', '.join(TRACE_OPTIONS)})")
        if value is not None and not isinstance(value, wanted):
            raise invalid(f"option {key} is {_json_type(value)}, not {_json_type(wanted())}")
    if options.get("platform") is not None and options["platform"] not in PLATFORMS:
        raise invalid(f"unknown platform {_clip(options['platform'])} (use one of {', '.join(PLATFORMS)})")
    return path, where, options


def _json_type(value) -> str:
    """What a JSON value is, as a message says it: "null", "a number", "an object"..."""
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)


def _clip(value, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


async def _trace_plan(ls: PallasServer, uri: str, disk, where, options: dict, choice: str | None = None):
    """The request read through the kernel model (intent.py): a body's launches, the platform it runs on.
    `disk`: the text traced, or the `OpenNotebook` whose cells are."""
    from types import SimpleNamespace

    from .trace.intent import plan_trace, unanalysed_plan

    def plan(project, path, text):
        return plan_trace(project, path, text, where, options.get("platform"), "the platform option", choice)

    document = disk if isinstance(disk, OpenNotebook) else SimpleNamespace(uri=uri, source=disk)
    found = await ls.on_analysis_thread(document, "trace target", plan)
    if found is None:  # logged; a name is still traced as named
        return unanalysed_plan(uri_to_path(uri), where, options.get("platform"), "the kernel model could not be built")
    return found


def _in_cells(note: str, disk) -> str:
    """A note naming module lines, with the cells' lines when the trace is a notebook's (`disk`)."""
    return disk.notebook.cell_lines_in(note) if isinstance(disk, OpenNotebook) else note


async def _ask_launch(ls: PallasServer, plan, uri: str, disk: str, where, options: dict):
    """Several launches run the body: the user picks one (window/showMessageRequest)."""
    try:
        answer = await ls.window_show_message_request_async(types.ShowMessageRequestParams(
            type=types.MessageType.Info, message=f"pallas-lsp: {_in_cells(plan.choice_message(), disk)}. Which one should be traced?",
            actions=[types.MessageActionItem(title=t.name) for t in plan.choices]))
    except Exception as exc:  # a client that cannot ask: the answer lists the launches
        log.info("could not ask which launch to trace: %s", exc)
        answer = None
    if answer is None or not isinstance(getattr(answer, "title", None), str):
        return plan
    return await _trace_plan(ls, uri, disk, where, options, choice=answer.title)


def _notebook_to_trace(ls: PallasServer, arguments) -> tuple[OpenNotebook | None, str | None, tuple]:
    """A trace asked in a notebook's cell (its URI), or of an open notebook (its file URI): the
    notebook as the editor has it, the cell's URI, and the arguments with the notebook's file URI."""
    uri = arguments[0] if arguments else None
    if not isinstance(uri, str):
        return None, None, arguments
    document = ls.workspace.get_notebook_document(cell_uri=uri) or ls.workspace.get_notebook_document(notebook_uri=uri)
    if document is None:
        return None, None, arguments
    notebook = OpenNotebook(document, ls.open_document)
    cell_uri = uri if notebook.cell_index(uri) is not None else None
    return notebook, cell_uri, (path_uri(notebook.path), *arguments[1:])


@server.command(TRACE_COMMAND)
async def trace_command(ls: PallasServer, *arguments):
    """Arguments: a document URI; a function name or an LSP position inside its definition; optionally
    `{"args": "f32[128]", "platform": "cuda"|"host", "compile": bool}`. Returns the trace result (JSON)."""
    from .analysis.notebooks import is_notebook
    from .trace import failure, trace_target
    from .trace.worker import TraceError, choose_interpreter, interpreter_executable

    outer = ls.protocol._request_futures.get(ls.protocol.msg_id)  # the executeCommand request itself (before any await)
    notebook, cell_uri, arguments = _notebook_to_trace(ls, arguments)
    path, where, options = _trace_arguments(arguments)
    uri = arguments[0]
    label = where if isinstance(where, str) else f"line {where + 1}"
    folder = ls.folder_for(path)
    platform = options.get("platform") or "cuda"  # until the plan says how the kernel runs
    if notebook is not None:  # the editor's cells, through the kernel's, are written to a module and traced
        uri, where = notebook.uri, notebook.module_line(cell_uri, where)
        if where is None:
            return failure(path, label, platform, "UsageError",
                           "a position in a notebook is given with the URI of its code cell", "args")
        disk = notebook
    elif is_notebook(path):  # its cells are known only from the editor here
        return failure(path, label, platform, "UsageError", "open the notebook to trace its kernels here "
                       "(or run pallas-lsp trace NOTEBOOK.ipynb::NAME)", "args")
    else:
        try:
            disk = read_source(path)  # as Python will import it (the trace does), line endings kept
        except OSError as exc:
            return failure(path, label, platform, "UsageError", f"cannot read {path}: {exc}", "args")
    document = ls.open_document(uri) if notebook is None else None
    if document is not None and document.source != disk:
        result = failure(path, label, platform, "UsageError",
                         "save the file first: the trace imports the saved file, which differs from the editor's", "args")
        if ls.settings.show_trace_results:
            ls.window_show_message(trace_result_message(result, label, None))
        return result
    plan = await _trace_plan(ls, uri, disk, where, options)
    if plan.choices:
        plan = await _ask_launch(ls, plan, uri, disk, where, options)
    function = plan.function
    if function is None:
        why = plan.intent.problem or (f"{_in_cells(plan.choice_message(), disk)}; none was chosen (trace one of them by name)"
                                      if plan.intent.targets else f"no module-level function at {label}")
        result = failure(path, label if plan.intent.targets else "", platform, "UsageError", why, "args",
                         launches=[t.name for t in plan.intent.targets])
        if ls.settings.show_trace_results:
            ls.window_show_message(trace_result_message(result, label, None))
        return result
    platform = plan.platform.name
    try:
        python = interpreter_executable(choose_interpreter(folder.settings.python))
    except TraceError as exc:
        return failure(path, function, platform, "TraceError", str(exc), "worker")

    workers = []
    cancelled = threading.Event()

    def cancel(*_):
        cancelled.set()
        for worker in workers:
            worker.cancel()

    def remember(worker):
        workers.append(worker)
        if cancelled.is_set():
            worker.cancel()

    if outer is not None:
        outer.add_done_callback(lambda f: f.cancelled() and cancel())
    token = _client_progress_token.get()
    window = ls.client_capabilities.window
    if token is None and window is not None and window.work_done_progress:
        import uuid

        token = str(uuid.uuid4())
        try:
            await ls.work_done_progress.create_async(token)
        except Exception as exc:  # progress is a courtesy
            log.info("no progress for the trace: %s", exc)
            token = None
    if token is not None:
        ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(
            title=f"Tracing {function}", message=f"JAX lowering for {platform}", cancellable=True))
        ls.work_done_progress.tokens[token].add_done_callback(lambda f: f.cancelled() and cancel())
    def run():
        from functools import partial

        from .trace.notebooks import trace_notebook_target

        settings = dict(args=options.get("args"), platform=platform, compile=options.get("compile"),
                        timeout=_trace_timeout(ls, folder), on_worker=remember)
        if notebook is None:
            return trace_target(trace_pool(), python, folder.root, path, function, source=disk, **settings)
        traced = trace_notebook_target(partial(trace_target, trace_pool(), python, folder.root), path,
                                       notebook.notebook, function, plan.target.line, **settings)
        if traced is None:
            return failure(path, function, platform, "UsageError", f"no cell of the notebook defines {function}", "args")
        return traced

    try:
        result = await asyncio.get_running_loop().run_in_executor(_trace_executor, run)
    except asyncio.CancelledError:
        cancel()
        raise
    finally:
        if token is not None:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message="cancelled" if cancelled.is_set() else "done"))
    if cancelled.is_set():
        return result
    plan.annotate(result)
    definition = plan.target.line
    if definition is not None:
        result["definition_line"] = definition  # 0-based: where a `# pallas-lsp: trace(...)` comment goes
    in_module = result
    if notebook is not None:  # the result names cells' lines; hovers and lenses read the notebook's module
        from .trace.notebooks import annotate_in_cells, at_module_lines

        annotate_in_cells(result, notebook.notebook)
        result = notebook.with_cell_uris(result)
        in_module = at_module_lines(result, notebook.notebook)
    diagnostics = trace_result_diagnostics(result, os.path.realpath(path), definition, notebook)
    remember_traced_refs(ls, uri, in_module)
    previous = _trace_origins.pop(uri, set())
    for stale in previous:
        ls.trace_diagnostics.pop(stale, None)
    ls.trace_diagnostics.update(diagnostics)
    _trace_origins[uri] = set(diagnostics)
    _republish(ls, previous | set(diagnostics))
    if result.get("kernels"):  # the budget lenses and hovers show what JAX sized, marked as traced
        ls.traced_kernels[uri] = in_module["kernels"]
        _refresh_code_lenses(ls)
    if ls.settings.show_trace_results:  # off where the client shows the result itself (VS Code's report)
        ls.window_show_message(trace_result_message(result, function, definition))
    return result


@server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
async def code_lens(ls: PallasServer, params: types.CodeLensParams) -> list[types.CodeLens] | None:
    """"Trace kernel" above every launch. Where its arguments are not found the title says so: the trace
    answers ArgsNotFound with `suggested_args`, and the client asks the user and calls again with
    `{"args": ...}` (VS Code: an input box; other clients get a message naming the comment to write).
    Above every Mosaic GPU launch that allocates, its shared-memory estimate (`SMEM 196,608 / 232,448 B`):
    a label, no command to run."""
    from .analysis.hover import budget_lenses
    from .trace.entries import entry_functions

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
    traced = ls.traced_kernels.get(document.uri, ())
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
