"""Conversions between the analysis core's plain data and LSP: URIs and paths, code-point and
UTF-16 columns, findings and diagnostics."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

from ..analysis import Finding
from ..source_text import LINE_BREAK, read_source, split_lines_keepends
from ..rules import RULES_BY_CODE, doc_url

SOURCE = "pallas-lsp"
SOURCES = (SOURCE, "jax")  # the rules', and JAX's own verdicts on launches entry points reached (PAL100)
_SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
             "info": types.DiagnosticSeverity.Information}


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


def to_diagnostic(finding: Finding, lines: list[str], lines_of=None, docs_url: str | None = None,
                  lines_hash: str | None = None, uri_of=None) -> types.Diagnostic:
    """`lines_of(path)` gives another file's lines, so related locations get UTF-16 columns too;
    `docs_url` is where the rule pages are linked (a docs site), else the packaged pages;
    `lines_hash` is `text_hash(lines)` when the caller has it (hashing a big text per finding is not free);
    `uri_of(path)` names a related file as the client does (default: its file URI)."""

    def position(line: int, column: int, in_lines: list[str] | None = None) -> types.Position:
        in_lines = lines if in_lines is None else in_lines
        text = in_lines[line] if line < len(in_lines) else ""
        return types.Position(line=line, character=utf16_column(text, column))

    span = finding.span
    rule = RULES_BY_CODE.get(finding.code)
    url = doc_url(rule, docs_url) if rule else None
    related = []
    for r in finding.related:
        other = lines_of(r.path) if lines_of is not None else []
        related.append(types.DiagnosticRelatedInformation(
            location=types.Location(uri=(uri_of or path_uri)(r.path), range=types.Range(
                start=position(r.span.line, r.span.column, other),
                end=position(r.span.end_line, r.span.end_column, other))),
            message=r.message))
    return types.Diagnostic(
        range=types.Range(start=position(span.line, span.column), end=position(span.end_line, span.end_column)),
        message=finding.message,
        severity=_SEVERITY[finding.severity],
        code=finding.code,
        code_description=types.CodeDescription(href=url) if url else None,
        source=finding.source if finding.source in SOURCES else SOURCE,
        related_information=related or None,
        data={"textHash": lines_hash or text_hash(lines)},  # code actions: which text the finding was reported for
    )


_NOT_SHOWN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def shown_text(message: str) -> str:
    """A notification's text as no client renders anything but text: VS Code turns `[label](command:...)`
    in a message into a link that runs that command (Restricted Mode too), and messages quote
    repository text (settings keys and values, file names, what a traced program printed), so a
    link's `](` is split and control characters are written as escapes."""
    message = _NOT_SHOWN.sub(lambda m: m[0].encode("unicode_escape").decode("ascii"), message)
    return message.replace("](", "] (")


def path_uri(path: str) -> str:
    return Path(path).as_uri() if os.path.isabs(path) else path


def line_range(lines: list[str], line: int) -> types.Range:
    text = lines[line] if 0 <= line < len(lines) else ""
    start = len(text) - len(text.lstrip())
    return types.Range(start=types.Position(line=line, character=utf16_column(text, start)),
                       end=types.Position(line=line, character=utf16_column(text, len(text))))


def expression_range(lines: list[str], location: dict | None) -> types.Range | None:
    """The exact expression JAX's frame names (Python columns: UTF-8 byte offsets), if it has one."""
    try:
        start, end = int(location["line"]) - 1, int(location["end_line"]) - 1
        if not (0 <= start <= end < len(lines)):
            return None

        def position(line: int, offset: int) -> types.Position:
            text = lines[line]
            column = len(text.encode("utf-8")[:int(offset)].decode("utf-8", "ignore"))
            return types.Position(line=line, character=utf16_column(text, column))

        return types.Range(start=position(start, location["column"]), end=position(end, location["end_column"]))
    except (KeyError, TypeError, ValueError):
        return None


def text_hash(lines: list[str]) -> str:
    return hashlib.sha1("\n".join(lines).encode("utf-8", "surrogatepass")).hexdigest()


class PythonTextDocument(TextDocument):
    """pygls's document with LSP's lines: only `\n`, `\r\n` and `\r` end one (pygls uses
    `str.splitlines`, which also splits at form feeds, U+2028, NEL...: an incremental edit after
    one would land on the wrong line). A file that is not open is read as Python reads it."""

    @property
    def lines(self):
        return tuple(split_lines_keepends(self.source))

    @property
    def source(self) -> str:
        if self._source is None and self.path is not None:
            return read_source(self.path)
        return self._source or ""

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        """pygls' edit, without splitting the whole document into lines and joining them again for
        every keystroke (~50 MB of line strings per edit in a 5 MB document, whose memory CPython
        keeps): only the two lines the range names are looked at, columns converted as pygls does."""
        source = self.source
        start, end = self._offset(source, change.range.start), self._offset(source, change.range.end)
        if end < start:
            super()._apply_incremental_change(change)
            return
        self._source = source[:start] + change.text + source[end:]

    def _offset(self, source: str, position: types.Position) -> int:
        if "\r" in source:
            line_start, line_end = _line_span(source, position.line)
        else:  # only "\n" ends a line: found by `str.find`, not a match object per line above
            line_start = 0
            for _ in range(position.line):
                newline = source.find("\n", line_start)
                if newline < 0:
                    return len(source)  # past the last line: pygls puts it at the end
                line_start = newline + 1
            newline = source.find("\n", line_start)
            line_end = len(source) if newline < 0 else newline + 1
        if line_start == len(source):
            return len(source)
        line = source[line_start:line_end]
        column = self._position_codec.position_from_client_units(
            [line], types.Position(line=0, character=position.character)).character
        return line_start + min(column, len(line))


def _line_span(source: str, number: int) -> tuple[int, int]:
    """Where line `number` starts and ends (after its line break), any of LSP's line breaks;
    `(len(source), len(source))` past the last line."""
    line_start, count = 0, 0
    for match in LINE_BREAK.finditer(source):
        if count == number:
            return line_start, match.end()
        line_start, count = match.end(), count + 1
    if count != number:
        return len(source), len(source)
    return line_start, len(source)


def use_python_documents(workspace: Workspace) -> None:
    """Make `workspace` create `PythonTextDocument`s (call once, when pygls has created it)."""
    create = workspace._create_text_document

    def create_python_document(*args, **kwargs):
        document = create(*args, **kwargs)
        document.__class__ = PythonTextDocument
        return document

    workspace._create_text_document = create_python_document
