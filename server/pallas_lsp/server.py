"""The language server: translates LSP to the analysis core and back, nothing else.

Analysis runs off the event loop on one worker thread (jedi is not thread-safe), debounced per
document; a result is published only if its document version is still the newest, so an editor
never sees diagnostics for text it no longer has.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
from dataclasses import dataclass, field
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from . import __version__
from .analysis import Finding, Project, analyze, selected_codes
from .analysis.environment import EnvironmentError_
from .rules import RULES_BY_CODE, doc_url

log = logging.getLogger(__name__)

SOURCE = "pallas-lsp"
_SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
             "info": types.DiagnosticSeverity.Information}
_LOG_LEVELS = {"error": logging.ERROR, "warning": logging.WARNING, "info": logging.INFO, "debug": logging.DEBUG}


@dataclass
class Settings:
    """Editor settings (initializationOptions / workspace configuration `pallas`)."""

    python: str | None = None
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    debounce_ms: int = 150
    log_level: str = "info"

    @classmethod
    def from_options(cls, options) -> "Settings":
        settings = cls()
        if not isinstance(options, dict):
            return settings
        options = options.get("pallas", options)
        if isinstance(options.get("python"), str) and options["python"]:
            settings.python = options["python"]
        if isinstance(options.get("select"), list):
            settings.select = [str(c) for c in options["select"]]
        if isinstance(options.get("ignore"), list):
            settings.ignore = [str(c) for c in options["ignore"]]
        if isinstance(options.get("debounceMs"), int) and options["debounceMs"] >= 0:
            settings.debounce_ms = options["debounceMs"]
        if options.get("logLevel") in _LOG_LEVELS:
            settings.log_level = options["logLevel"]
        return settings


def uri_to_path(uri: str) -> str:
    parsed = urlparse(uri)
    return os.path.abspath(unquote(parsed.path)) if parsed.scheme == "file" else uri


def utf16_column(line_text: str, column: int) -> int:
    """LSP counts columns in UTF-16 code units; the core counts code points."""
    prefix = line_text[:column]
    return column + sum(1 for ch in prefix if ord(ch) > 0xFFFF)


def code_point_column(line_text: str, character: int) -> int:
    """Inverse of `utf16_column`."""
    units = 0
    for index, ch in enumerate(line_text):
        if units >= character:
            return index
        units += 2 if ord(ch) > 0xFFFF else 1
    return len(line_text)


class ClientLogHandler(logging.Handler):
    """Sends log records to the client's output (`window/logMessage`); never to stdout."""

    def __init__(self, server: "PallasServer"):
        super().__init__()
        self.server = server

    def emit(self, record: logging.LogRecord) -> None:
        kind = {logging.ERROR: types.MessageType.Error, logging.WARNING: types.MessageType.Warning,
                logging.INFO: types.MessageType.Info}.get(record.levelno, types.MessageType.Log)
        try:
            self.server.window_log_message(types.LogMessageParams(type=kind, message=self.format(record)))
        except Exception:  # logging must never take the server down
            pass


class PallasServer(LanguageServer):
    def __init__(self):
        super().__init__("pallas-lsp", __version__)
        self.settings = Settings()
        self.project: Project | None = None
        self.pull = False
        self.executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="pallas-analysis")
        self.pending: dict[str, asyncio.Task] = {}
        self.published: dict[str, int] = {}  # uri -> newest version published

    # ---- analysis -----------------------------------------------------------------------------

    def configure(self, root: str | None, settings: Settings) -> None:
        self.settings = settings
        logging.getLogger("pallas_lsp").setLevel(_LOG_LEVELS[settings.log_level])
        self.project = Project(root=root, python=settings.python)
        try:
            env = self.project.environment
            log.info("analysing against %s (Python %s)", env.executable, env.version)
        except EnvironmentError_ as exc:
            self.project.use_jedi = False
            self.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Error,
                message=f"pallas-lsp: {exc}. Names are resolved from import statements only until it is fixed."))

    def findings(self, path: str, text: str) -> list[Finding]:
        """Runs on the analysis thread."""
        assert self.project is not None
        self.project.set_text(path, text)
        codes = selected_codes(self.settings.select, self.settings.ignore)
        try:
            return analyze(self.project, path, text, codes=codes)
        except Exception:
            log.exception("analysis failed for %s", path)
            return []

    async def analyse_document(self, uri: str) -> tuple[int | None, list[types.Diagnostic]] | None:
        document = self.workspace.get_text_document(uri)
        version, text = document.version, document.source
        loop = asyncio.get_running_loop()
        findings = await loop.run_in_executor(self.executor, self.findings, uri_to_path(uri), text)
        lines = text.splitlines()
        return version, [to_diagnostic(f, lines) for f in findings]

    def schedule(self, uri: str) -> None:
        if self.pull:
            return
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()
        self.pending[uri] = asyncio.ensure_future(self._debounced_publish(uri))

    async def _debounced_publish(self, uri: str) -> None:
        try:
            await asyncio.sleep(self.settings.debounce_ms / 1000)
            version, diagnostics = await self.analyse_document(uri)
        except asyncio.CancelledError:
            return
        document = self.workspace.text_documents.get(uri)
        if document is None or document.version != version:
            return  # closed or edited meanwhile: a newer analysis is (or will be) on its way
        if version is not None and self.published.get(uri, -1) > version:
            return
        self.published[uri] = version if version is not None else -1
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=diagnostics))

    def clear(self, uri: str) -> None:
        task = self.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        self.published.pop(uri, None)
        if self.project is not None:
            self.project.set_text(uri_to_path(uri), None)
        if not self.pull:
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def to_diagnostic(finding: Finding, lines: list[str]) -> types.Diagnostic:
    def position(line: int, column: int) -> types.Position:
        text = lines[line] if line < len(lines) else ""
        return types.Position(line=line, character=utf16_column(text, column))

    span = finding.span
    rule = RULES_BY_CODE.get(finding.code)
    url = doc_url(rule) if rule else None
    related = [types.DiagnosticRelatedInformation(
        location=types.Location(uri=_path_uri(r.path), range=types.Range(
            start=types.Position(line=r.span.line, character=r.span.column),
            end=types.Position(line=r.span.end_line, character=r.span.end_column))),
        message=r.message) for r in finding.related]
    return types.Diagnostic(
        range=types.Range(start=position(span.line, span.column), end=position(span.end_line, span.end_column)),
        message=finding.message,
        severity=_SEVERITY[finding.severity],
        code=finding.code,
        code_description=types.CodeDescription(href=url) if url else None,
        source=SOURCE,
        related_information=related or None,
    )


def _path_uri(path: str) -> str:
    from pathlib import Path

    return Path(path).as_uri() if os.path.isabs(path) else path


server = PallasServer()


@server.feature(types.INITIALIZE)
def initialize(ls: PallasServer, params: types.InitializeParams) -> None:
    root = None
    if params.workspace_folders:
        root = uri_to_path(params.workspace_folders[0].uri)
    elif params.root_uri:
        root = uri_to_path(params.root_uri)
    capabilities = params.capabilities.text_document
    ls.pull = bool(capabilities and capabilities.diagnostic)
    handler = ClientLogHandler(ls)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logging.getLogger("pallas_lsp").addHandler(handler)
    ls.configure(root, Settings.from_options(params.initialization_options))


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: PallasServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: PallasServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: PallasServer, params: types.DidSaveTextDocumentParams) -> None:
    # A saved kernel body or helper can change what other open files report.
    for uri in list(ls.workspace.text_documents):
        if uri != params.text_document.uri:
            ls.schedule(uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: PallasServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.clear(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC,
                types.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=False))
async def pull_diagnostics(ls: PallasServer, params: types.DocumentDiagnosticParams):
    _, diagnostics = await ls.analyse_document(params.text_document.uri)
    return types.RelatedFullDocumentDiagnosticReport(items=diagnostics)


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: PallasServer, params: types.HoverParams) -> types.Hover | None:
    from .analysis.hover import hover_text

    document = ls.workspace.get_text_document(params.text_document.uri)
    lines = document.lines
    line = params.position.line
    if line >= len(lines):
        return None
    column = code_point_column(lines[line], params.position.character)
    path, text = uri_to_path(document.uri), document.source

    def compute():
        try:
            ls.project.set_text(path, text)
            return hover_text(ls.project, path, text, line, column)
        except Exception:
            log.exception("hover failed for %s", path)
            return None

    markdown = await asyncio.get_running_loop().run_in_executor(ls.executor, compute)
    if markdown is None:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown))


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="pallas-lsp serve")
    parser.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    args = parser.parse_args(argv)
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io()
    return 0
