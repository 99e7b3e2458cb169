"""The session: what the server holds of the client's workspace, and the analysis thread.

Folders with their settings and projects (one `Project` per workspace folder, loose files by their
pyproject.toml), the open documents and notebooks as the editor has them, and the one thread
analysis runs on (jedi is not thread-safe). Handlers read the session through the server object.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import threading
from urllib.parse import unquote

from lsprotocol import types

from ..analysis import Finding, Project
from ..analysis.environment import EnvironmentError_
from ..analysis.first_pass import model_importer_kernels
from ..python_path import resolve_python
from ..source_text import MAX_FILE_BYTES, FileTooLarge, split_lines
from ..config import ConfigError
from ..config import Settings as FileSettings
from ..engine import analyze_before_importers, analyze_incremental, load_settings, selected_codes, unknown_codes, unknown_codes_message
from .convert import path_uri, shown_text, uri_to_path
from .notebooks import OpenNotebook
from .settings import Folder, Settings, effective
from .diagnostics import Diagnostics
from .known_answers import KnownAnswers
from .memory import collecting_less_often, give_freed_memory_back, restore_collections

log = logging.getLogger(__name__)

_LOG_LEVELS = {"error": logging.ERROR, "warning": logging.WARNING, "info": logging.INFO, "debug": logging.DEBUG}


@contextlib.contextmanager
def _warnings_of_reading(session: "Session"):
    """What reading the settings files warned about (a pyproject.toml that is no regular file, or too
    big, read as the defaults) is shown to the user, not only logged: their settings do not apply."""
    said: list[str] = []
    reader = threading.get_ident()  # what this thread warns while it reads them, not what others log meanwhile
    collect = logging.Handler(logging.WARNING)
    collect.emit = lambda record: record.thread == reader and said.append(record.getMessage())  # type: ignore[method-assign]
    logger = logging.getLogger("pallas_lsp")
    logger.addHandler(collect)
    try:
        yield
    finally:
        logger.removeHandler(collect)
        for message in said:
            session.show_error(f"pallas-lsp: {message}", types.MessageType.Warning)


class Session(Diagnostics):
    """The state of one client's session, as a base of the server object (`PallasServer`), which
    also is the pygls `LanguageServer` these methods use (`workspace`, `window_show_message`)."""

    def __init__(self) -> None:
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
        self.first_pulled: set[str] = set()  # open documents a pull client has had a first pass's answer for
        self.warned: set[str] = set()  # warnings about settings already shown
        self.setting_problems: set[str] = set()  # bad setting values of the last configuration, shown
        self.trace_diagnostics: dict[str, list[types.Diagnostic]] = {}  # `pallas-trace` results (trace section)
        self.analysed: set[str] = set()  # paths analysed once (a first analysis collects garbage less often)
        self.traced_kernels: dict[str, list[dict]] = {}  # uri -> the kernel records of its last trace (hover, lens)
        # JAX's types of kernel refs from the last trace of each uri: {body path: {(first line, name): avals}}
        self.traced_refs: dict[str, dict[str, dict[tuple[int, str], list[str]]]] = {}
        self.watch_files = False  # the client can report file events (didChangeWatchedFiles)
        self.file_events = False  # ... and has been asked to: workspace files are read again only on events
        self.background_queued = False  # `background_work` is waiting on the analysis thread
        # Open notebooks: the diagnostics of each cell, computed once per notebook text (every cell's
        # pull asks for them): uri -> ((version, module text), future of {cell uri: diagnostics}).
        self.notebook_results: dict[str, tuple[tuple, asyncio.Future]] = {}
        # JAX in the loop (entry_points.py): each folder's newest run of its entry points, the run on
        # its way, and how the server lays JAX's verdicts over a file's findings (wired by server.py)
        self.entry_runs: dict = {}
        self.entry_tasks: dict[str, asyncio.Task] = {}
        self.with_verdicts = None
        # A pull client that has pulled a notebook cell gets cells' diagnostics by pull only (as
        # files); until then they are pushed (VS Code's client pulls for no cell: its tabs hold the
        # notebook, not its cells). Cells pushed a non-empty list, to clear when pulls take over.
        self.pulls_cells = False
        self.pushed_cells: set[str] = set()
        # Inlay hints and parameter hovers answered from the last analysis while another runs (known_answers.py)
        self.known_answers = KnownAnswers()
        self.hints_refresh: asyncio.Future | None = None  # the refresh asked for once the analysis thread is done

    def window_show_message(self, params: types.ShowMessageParams) -> None:
        super().window_show_message(types.ShowMessageParams(type=params.type, message=shown_text(params.message)))

    def window_show_message_request_async(self, params: types.ShowMessageRequestParams, *args, **kwargs):
        params = types.ShowMessageRequestParams(type=params.type, message=shown_text(params.message),
                                                actions=params.actions)
        return super().window_show_message_request_async(params, *args, **kwargs)

    @property
    def project(self) -> Project | None:
        """The first folder's project (single-root workspaces have just this one)."""
        return self.folders[0].project if self.folders else None

    def make_folder(self, root: str, uri: str | None, editor: Settings,
                    previous: "Folder | None" = None) -> Folder:
        try:
            with _warnings_of_reading(self):
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
        from ..config import find_pyproject

        pyproject = find_pyproject(os.path.dirname(path) or ".")
        root = str(pyproject.parent) if pyproject else (os.path.dirname(path) or os.getcwd())
        if root not in self.loose:
            self.loose[root] = self.make_folder(root, None, self.settings)
        return self.loose[root]

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
        return self.first_findings(path, text, notebook, before_importers=False)[0]

    def first_findings(self, path: str, text: str, notebook=None,
                       before_importers: bool = True) -> tuple[list[Finding], list]:
        """`findings`, with `before_importers` those a first pass finds without modelling the kernels
        of the file's importers (analysis/first_pass.py), and what it left out (none: they are all);
        runs on the analysis thread."""
        if self.too_large(path, text):
            return [], []
        first = path not in self.analysed
        self.analysed.add(path)
        if not first:  # a first analysis whose diagnostics never went out (edited meanwhile) left them
            restore_collections()
        with collecting_less_often(until_settled=True) if first else contextlib.nullcontext(), \
                self.known_answers.analysis():
            return self._findings(self.folder_for(path), path, text, notebook, before_importers)

    def _findings(self, folder: Folder, path: str, text: str, notebook,
                  before_importers: bool = False) -> tuple[list[Finding], list]:
        if notebook is not None:
            folder.project.set_notebook(path, notebook)
        else:
            folder.project.set_text(path, text)
        codes = selected_codes(folder.settings.select, folder.settings.ignore)
        # a notebook at any size: an edit of a cell re-analyses what its statements reach (bench/notebook_latency.py)
        min_lines = {"min_lines": 0} if notebook is not None else {}
        try:
            if before_importers:
                return analyze_before_importers(folder.project, path, text, codes=codes, **min_lines)
            return analyze_incremental(folder.project, path, text, codes=codes, **min_lines), []
        except Exception:
            log.exception("analysis failed for %s", path)
            if before_importers:  # the whole analysis may not fail where the first pass did
                return self._findings(folder, path, text, notebook)
            return [], []
        finally:
            folder.project.drop_models_over_budget(path)  # open or not: parsed again when needed
            if len(text) > folder.project.model_text_budget:
                give_freed_memory_back()  # a big document's model (or an edit's lists of its lines) is gone

    def model_importer_kernels(self, path: str, importer: str, own_module_only: bool) -> None:
        """One step of what a first pass left out (`first_pass.model_importer_kernels`), on the analysis thread."""
        project = self.folder_for(path).project
        try:
            with self.known_answers.analysis():
                model_importer_kernels(project, path, importer, own_module_only)
        except Exception:  # the whole analysis after it finds out again, and says so
            log.debug("modelling the kernels of %s failed", importer, exc_info=True)
        finally:
            project.drop_models_over_budget(path)

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

    def refreshes_inlay_hints(self) -> bool:
        """The client can be asked to ask for inlay hints again (`workspace/inlayHint/refresh`)."""
        workspace = self.client_capabilities.workspace
        return bool(workspace is not None and workspace.inlay_hint is not None and workspace.inlay_hint.refresh_support)

    def refresh_inlay_hints_after_analysis(self) -> None:
        """Hints were answered from the last analysis (known_answers.py): once the analysis thread has done
        what it was doing, the client asks again (once, however many were answered so meanwhile)."""
        if self.hints_refresh is not None and not self.hints_refresh.done():
            return

        async def refresh():
            await asyncio.get_running_loop().run_in_executor(self.executor, lambda: None)
            try:
                self.workspace_inlay_hint_refresh(None)
            except Exception:
                log.debug("workspace/inlayHint/refresh failed", exc_info=True)

        self.hints_refresh = asyncio.ensure_future(refresh())

    def is_current(self, document, version: int | None) -> bool:
        """False when the editor changed the document while an answer for `version` was computed."""
        if isinstance(document, OpenNotebook):
            current = self.workspace.get_notebook_document(notebook_uri=document.uri)
        else:
            current = self.open_document(document.uri)
        return current is None or current.version == version

    def notebook_of_cell(self, cell_uri: str) -> OpenNotebook | None:
        """The open notebook a cell document belongs to, as the editor has it now."""
        document = self.workspace.get_notebook_document(cell_uri=cell_uri)
        return None if document is None else OpenNotebook(document, self.open_document)

    def open_notebook_at(self, path: str) -> OpenNotebook | None:
        for document in list(self.workspace.notebook_documents.values()):
            if uri_to_path(document.uri) == path:
                return OpenNotebook(document, self.open_document)
        return None

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
