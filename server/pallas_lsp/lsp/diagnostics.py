"""Diagnostics, pushed (`textDocument/publishDiagnostics`, debounced per document) or pulled
(`textDocument/diagnostic`), for files and notebook cells.

Analysis runs off the event loop on the session's analysis thread, debounced per document once
its first diagnostics are out (an opened document is analysed at once); a result is published
only if its document version is still the newest, so an editor never sees diagnostics for text
it no longer has.
"""

from __future__ import annotations

import asyncio
import logging
import os

from lsprotocol import types

from ..source_text import read_source, split_lines
from .convert import text_hash, to_diagnostic, uri_to_path
from .memory import settle_heap
from .notebooks import OpenNotebook

log = logging.getLogger(__name__)


class Diagnostics:
    """Scheduling, computing and publishing the diagnostics of open documents and notebooks: a part
    of the session (`Session` derives from it), kept apart because it is the server's busiest."""

    async def analyse_document(self, uri: str) -> tuple[int | None, list[types.Diagnostic]]:
        version, diagnostics, _ = await self._analysed(uri)
        return version, diagnostics

    async def _analysed(self, uri: str, before_importers: bool = False) -> tuple[int | None, list[types.Diagnostic], list]:
        """(version, diagnostics, what was left out): with `before_importers`, a first pass's
        (`Session.first_findings`), which may leave out the rules that need the importers' kernels."""
        await self.wait_for_configuration()
        document = self.readable_document(uri)
        if document is None:
            return None, [], []
        version, text = document.version, document.source
        loop = asyncio.get_running_loop()
        findings, left_out = await loop.run_in_executor(
            self.executor, self.first_findings, uri_to_path(uri), text, None, before_importers)
        if self.with_verdicts is not None:  # JAX's, from the entry points run on save (entry_points.py)
            findings = self.with_verdicts(self, uri_to_path(uri), text, findings)
        if not findings:
            return version, [], left_out
        lines = split_lines(text)
        path = uri_to_path(uri)
        docs_url = self.folder_for(path).settings.docs_url
        lines_hash = text_hash(lines)
        return version, [to_diagnostic(f, lines, lambda p: lines if p == path else self.read_lines(p), docs_url,
                                       lines_hash, self.uri_for) for f in findings], left_out

    async def _debounced_publish(self, uri: str) -> None:
        """A document's first diagnostics wait for no burst of edits, nor for the kernels of the modules
        importing it: those of a first pass go out first, then, if it left rules out and they add
        something, the whole analysis's."""
        first = uri not in self.published
        try:
            if not first:
                await asyncio.sleep(self.settings.debounce_ms / 1000)
            version, diagnostics, left_out = await self._analysed(uri, before_importers=first)
            if not self._publish_current(uri, version, diagnostics) or not left_out:
                return
            version, whole = await self._after_first_pass(uri, left_out)
        except asyncio.CancelledError:
            return
        if whole != diagnostics:
            self._publish_current(uri, version, whole)

    async def _after_first_pass(self, uri: str, left_out: list) -> tuple[int | None, list[types.Diagnostic]]:
        """What a first pass left out: the kernels of each importer it did not model, a step each on the
        analysis thread (a hover or inlay hints asked meanwhile wait for one step), then the whole analysis."""
        loop = asyncio.get_running_loop()
        for importer, own_module_only in left_out:
            await loop.run_in_executor(self.executor, self.model_importer_kernels, uri_to_path(uri), importer,
                                       own_module_only)
        return await self.analyse_document(uri)

    async def _pull_after_first_pass(self, uri: str, left_out: list, pulled: list[types.Diagnostic]) -> None:
        """A pull client's first answer was a first pass's: once the whole analysis is done, it is asked to
        pull again if that adds something (the next pull finds the analysis done)."""
        try:
            _, whole = await self._after_first_pass(uri, left_out)
        except asyncio.CancelledError:
            return
        if whole != pulled:
            self.refresh_pulled()

    def _publish_current(self, uri: str, version: int | None, diagnostics: list[types.Diagnostic]) -> bool:
        """Publish, unless the document was closed or edited meanwhile (False: a newer analysis is,
        or will be, on its way)."""
        document = self.open_document(uri)
        if document is None or document.version != version:
            return False
        if version is not None and self.published.get(uri, -1) > version:
            return False
        self.published[uri] = version if version is not None else -1
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=version, diagnostics=diagnostics + self.trace_diagnostics.get(uri, [])))
        self.background_work()
        return True

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

    def reschedule_all(self) -> None:
        if self.refreshes_inlay_hints():
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

    def refresh_pulled(self) -> None:
        """Pull clients (only those declaring refreshSupport get pull) ask again for every document."""
        try:
            self.workspace_diagnostic_refresh(None)
        except Exception:  # a failed refresh leaves the client's next pull to catch up
            log.debug("workspace/diagnostic/refresh failed", exc_info=True)

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

    def clear(self, uri: str) -> None:
        """A document closed: its file is what is on disk again. If the editor's text was not the
        file's (closed without saving), the open files that import it are analysed again: a push
        client would otherwise keep showing what the unsaved text gave them."""
        task = self.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        self.published.pop(uri, None)
        self.first_pulled.discard(uri)
        path = uri_to_path(uri)
        self.known_answers.forget(path)
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

    def background_work(self) -> bool:
        """What the diagnostics did not wait for, on the analysis thread between analyses: the rest of
        each folder's import index (a few hundred files per step, so an edit waits for one step at
        most), then the cache files. False when nothing can be queued any more (exiting). jedi's environment
        may load from now on (`Project.load_environment_soon`: not beside a first analysis)."""
        for folder in [*self.folders, *self.loose.values()]:
            folder.project.environment_wanted.set()
        if self.background_queued:
            return True
        self.background_queued = True

        def step():
            self.background_queued = False
            settle_heap()
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


async def pull_diagnostics(ls: Diagnostics, params: types.DocumentDiagnosticParams):
    notebook = ls.workspace.get_notebook_document(cell_uri=params.text_document.uri)
    if notebook is not None:  # a cell: its part of the notebook's diagnostics
        ls.cell_pulled()
        _, by_cell = await ls.analyse_notebook(notebook.uri)
        cell = ls.open_document(params.text_document.uri)
        diagnostics = by_cell.get(cell.uri if cell is not None else params.text_document.uri, [])
    elif params.text_document.uri.startswith("vscode-notebook-cell:"):
        diagnostics = []  # a cell of a notebook not open here (yet): its didOpen asks for a pull again
    elif params.text_document.uri not in ls.first_pulled and ls.open_document(params.text_document.uri) is not None:
        uri = params.text_document.uri  # its first diagnostics: a first pass's (analysis/first_pass.py)
        ls.first_pulled.add(uri)
        _, diagnostics, left_out = await ls._analysed(uri, before_importers=True)
        if left_out:
            ls.pending[uri] = asyncio.ensure_future(ls._pull_after_first_pass(uri, left_out, diagnostics))
    else:
        _, diagnostics = await ls.analyse_document(params.text_document.uri)
    ls.background_work()
    return types.RelatedFullDocumentDiagnosticReport(
        items=diagnostics + ls.trace_diagnostics.get(params.text_document.uri, []))
