"""Source files as Python reads them, and lines as Python and LSP count them.

Python decodes a source file by its BOM or coding cookie (PEP 263), not as plain UTF-8, and refuses
one whose cookie names no text codec or whose bytes its codec cannot decode (`decode` says what
Python says, and never runs a non-text codec); and it (like LSP) ends a line only at `\\n`,
`\\r\\n` or `\\r`, never at the form feeds, vertical tabs, NEL or U+2028 that `str.splitlines()`
also splits at. Getting either wrong shifts every later finding, or reports a false syntax error.
"""

from __future__ import annotations

import ast
import codecs
import io
import os
import re
import tokenize
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from stat import S_ISREG
from typing import NamedTuple

MAX_FILE_BYTES = 5_000_000  # larger files are skipped, and the user is told so (see FileTooLarge)

LINE_BREAK = re.compile(r"\r\n|\r|\n")
LINE_BREAK_BYTES = re.compile(rb"\r\n|\r|\n")


def quiet_compile_warnings() -> None:
    """Compiling a user's file is ours, its warnings are not: CPython's `SyntaxWarning`s (an invalid
    escape sequence such as "\\d" in a non-raw string, `is` with a literal) and the
    `DeprecationWarning` older Pythons give for the same escapes would reach stderr from every
    `ast.parse` of it. Ruff prints nothing for such a file; `check`, `serve`, `trace` and the check
    workers call this once, before any file is read."""
    warnings.filterwarnings("ignore", category=SyntaxWarning)
    warnings.filterwarnings("ignore", message=r"invalid escape sequence", category=DeprecationWarning)
    warnings.filterwarnings("ignore", message=r"invalid (octal|decimal) literal", category=DeprecationWarning)


class Unanalysable(OSError):
    """A file the analyzer does not read; `reason` says why, for the user."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = path, reason


class FileTooLarge(Unanalysable):
    """A file over its limit (MAX_FILE_BYTES for sources): not read (a huge generated file would
    stall every analysis)."""

    def __init__(self, path: str, size: int, limit: int = MAX_FILE_BYTES, what: str = "analysed files"):
        super().__init__(path, f"{size:,} bytes, over the {limit // 1_000_000} MB limit for {what}")
        self.size = size


def skip_reason(error: OSError) -> str:
    """What to tell the user about a file that could not be read."""
    return getattr(error, "reason", None) or error.strerror or str(error)


def split_lines(text: str) -> list[str]:
    """Lines as Python and LSP see them (`\\n`, `\\r\\n`, `\\r`), without their endings.

    Like `str.splitlines()`, a final line break does not start another line.
    """
    lines = LINE_BREAK.split(text)
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()
    return lines if text else []


def split_lines_keepends(text: str) -> list[str]:
    """`split_lines` with each line's own ending kept (for diffs and edits)."""
    parts = LINE_BREAK.split(text)
    ends = LINE_BREAK.findall(text)
    lines = [part + end for part, end in zip(parts, ends)]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


class Token(NamedTuple):
    """A token without the physical line a `tokenize.TokenInfo` holds: Python 3.12.0 to 3.12.3 make a
    copy of the line for each token (CPython gh-119118), so the TokenInfos of a line of n tokens hold
    n copies of it (a 41 KB line of data: 1.1 GB). Keep these, never TokenInfos."""

    type: int
    string: str
    start: tuple[int, int]
    end: tuple[int, int]


def tokens(text: str) -> Iterator[Token]:
    """`text`'s tokens, one at a time (tokenize's errors as it meets them). The line copies are made
    all the same, and each freed at once: a line of n tokens still costs n times its length in time."""
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        yield Token(*token[:4])


@dataclass(frozen=True)
class Refusal:
    """Python refuses a file before parsing it (its coding cookie, BOM, bytes its codec cannot
    decode, a NUL byte): Python's message, and where (0-based, in the text the analyzer sees)."""

    line: int
    column: int
    end_line: int
    end_column: int
    message: str


@dataclass(frozen=True)
class Decoded:
    """A file's bytes as the analyzer reads them: `text`, the codec it was decoded with, and why
    Python would refuse the bytes (None when it reads them)."""

    text: str
    encoding: str
    refusal: Refusal | None = None


# PEP 263, as CPython's tokenizer reads it: the first line, or the second after a blank or comment line.
_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.ASCII)
_BLANK_OR_COMMENT = re.compile(r"^[ \t\f]*(?:#|$)", re.ASCII)
_BOM = b"\xef\xbb\xbf"
_ASCII_PROBE = b"# -*- coding: x -*-\nimport a\n"
# Codecs whose decoding takes quadratic time (pure Python), not run on a file over this many bytes:
# a 400 KB punycode file takes 84 s to decode, a 5 MB one hours.
_QUADRATIC_CODECS = {"punycode"}
QUADRATIC_CODEC_MAX_BYTES = 16_384


def _normal_name(name: str) -> str:
    """The cookie's codec name as CPython's tokenizer normalises it (`get_normal_name`)."""
    enc = name[:12].lower().replace("_", "-")
    if enc == "utf-8" or enc.startswith("utf-8-"):
        return "utf-8"
    if enc in ("latin-1", "iso-8859-1", "iso-latin-1") or enc.startswith(("latin-1-", "iso-8859-1-", "iso-latin-1-")):
        return "iso-8859-1"
    return name


def _cookie(first_lines: list[str]) -> tuple[int, re.Match] | None:
    """(0-based line, match) of the coding cookie among a file's first two lines."""
    for index, line in enumerate(first_lines[:2]):
        match = _COOKIE.match(line)
        if match:
            return index, match
        if not _BLANK_OR_COMMENT.match(line):
            return None
    return None


def _codec_problem(name: str) -> str | None:
    """Python's message when it cannot decode a file with the codec `name`: none by that name, or
    not a text encoding (rot13, base64, zlib...: never used). Only looked up by name:
    `codecs.lookup` imports nothing but modules of the standard `encodings` package."""
    try:
        info = codecs.lookup(name)
    except LookupError:
        return f"unknown encoding: {name}"
    if not getattr(info, "_is_text_encoding", True):
        return f"'{name}' is not a text encoding; use codecs.decode() to handle arbitrary codecs"
    return None


def cookie_refusal(first_lines: list[str], bom: bool = False) -> Refusal | None:
    """Python's refusal of a file whose first lines are these (after a UTF-8 BOM if `bom`), for its
    coding cookie alone: an unknown codec, one that is not a text encoding, a BOM with another
    codec. On the cookie line, at the codec's name; None when the cookie is fine or absent."""
    found = _cookie(first_lines)
    if found is None:
        return None
    line, match = found
    name = _normal_name(match.group(1))
    if bom and name != "utf-8":
        message = f"encoding problem: {name} with BOM"
    else:
        message = _codec_problem(name)
    if message is None:
        return None
    return Refusal(line, match.start(1), line, match.end(1), message)


def decode(data: bytes, path: str = "<file>") -> Decoded:
    """Python's decoding of a source file (BOM, coding cookie, else UTF-8), never an exception for
    bytes Python refuses: the text then keeps what it can (undecodable bytes replaced, a refused
    codec read as UTF-8) and `refusal` says what Python says. Line endings are kept as they are,
    so the text maps back to the file byte for byte. Unanalysable only for a codec too slow to run."""
    bom = data.startswith(_BOM)
    body = data[len(_BOM):] if bom else data
    head = [line.decode("utf-8", "replace") for line in LINE_BREAK_BYTES.split(body, 2)[:2]]
    refusal = cookie_refusal(head, bom)
    found = _cookie(head)
    name = _normal_name(found[1].group(1)) if found and refusal is None else "utf-8"
    if name == "utf-8":
        encoding = "utf-8-sig" if bom else "utf-8"
        try:
            return Decoded(data.decode(encoding), encoding, refusal)
        except UnicodeDecodeError:
            text = data.decode(encoding, "replace")
            return Decoded(text, encoding, refusal or _undecodable_utf8(data, body, bom, text))
    info = codecs.lookup(name)
    if info.name in _QUADRATIC_CODECS and len(data) > QUADRATIC_CODEC_MAX_BYTES:
        raise Unanalysable(path, f"its coding cookie names {name}, which decodes in quadratic time: "
                                 f"not decoded over {QUADRATIC_CODEC_MAX_BYTES:,} bytes")
    # CPython decodes the source with its line endings made "\n" and a final one added: its
    # verdict (and the positions in its message) are those of these bytes.
    as_python_reads = LINE_BREAK_BYTES.sub(b"\n", data)
    try:
        info.decode(as_python_reads if as_python_reads.endswith(b"\n") else as_python_reads + b"\n")
    except (UnicodeError, ValueError) as exc:
        message = str(exc)
    else:
        try:
            return Decoded(info.decode(data)[0], info.name)
        except (UnicodeError, ValueError):  # UTF-16 of an odd length Python made even: its parse refuses it
            return Decoded(data.decode(info.name, "replace"), info.name)
    # Python names no line: the first byte the codec cannot decode, where that maps to the text;
    # else (UTF-16 read from ASCII bytes, say) the cookie's codec name.
    if _ascii_compatible(info):
        try:
            info.decode(data)
        except (UnicodeError, ValueError) as exc:
            start = getattr(exc, "start", None)
            if start is not None:
                line, column = _position(data, start, info.name)
                return Decoded(data.decode(info.name, "replace"), info.name,
                               Refusal(line, column, line, column + 1, message))
    line, match = found
    return Decoded(data.decode("utf-8", "replace"), "utf-8", Refusal(line, match.start(1), line, match.end(1), message))


def _ascii_compatible(info: codecs.CodecInfo) -> bool:
    """Whether the codec reads ASCII as ASCII (so its replacement decoding shows the user's text)."""
    try:
        return info.decode(_ASCII_PROBE)[0] == _ASCII_PROBE.decode("ascii")
    except (UnicodeError, ValueError):
        return False


def _position(data: bytes, offset: int, encoding: str) -> tuple[int, int]:
    """0-based (line, column) of byte `offset` in the text `data` decodes to with `encoding`."""
    starts = [0, *(match.end() for match in LINE_BREAK_BYTES.finditer(data, 0, offset))]
    line_start = starts[-1]
    return len(starts) - 1, len(data[line_start:offset].decode(encoding, "replace"))


def _undecodable_utf8(data: bytes, body: bytes, bom: bool, text: str) -> Refusal | None:
    """What Python says of a UTF-8 file with bytes that are not UTF-8: nothing when they are only
    in comments (it reads those), else its error at the string or name that holds them. Python's
    own parser answers (a UTF-8 file names no codec to look up); its NUL check is left out, so it
    looks on past NULs, which `analysis.source` reports itself."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(data.replace(b"\0", b" "), "<file>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        return None
    except SyntaxError as exc:
        if "'utf-8' codec can't decode" not in (exc.msg or "") or not exc.lineno:
            return None  # a plain syntax error, before the bytes: the analysis reports it from the text
        line = exc.lineno - 1
        raw = LINE_BREAK_BYTES.split(body)
        lines = split_lines(text)

        def column(row: int, offset: int | None) -> int:
            if offset is None or offset < 1 or row >= len(raw):
                return len(lines[row]) if row < len(lines) else 0
            prefix = raw[row][:offset - 1]
            return len(prefix.decode("utf-8", "replace"))

        end_line = (exc.end_lineno or exc.lineno) - 1
        end_offset = exc.end_offset if exc.end_offset and exc.end_offset > 0 else None
        start = column(line, exc.offset)
        end = column(end_line, end_offset) if end_offset else start + 1
        return Refusal(line, start, end_line, end, exc.msg)
    except UnicodeDecodeError as exc:  # CPython 3.12 raises it bare for an f-string's part
        try:
            body.decode("utf-8")
        except UnicodeDecodeError as where:  # no position given: the first byte that is not UTF-8
            line, col = _position(body, where.start, "utf-8")
            return Refusal(line, col, line, col + 1, str(exc))
        return None
    except (ValueError, RecursionError, MemoryError):
        return None


def encode_source(text: str, like: bytes) -> bytes | None:
    """`text` encoded as the file `like` was (same BOM / cookie codec); None if it cannot be.

    None too when `like` itself does not decode losslessly: rewriting it would change bytes the
    user never saw.
    """
    try:
        decoded = decode(like)
        if decoded.refusal is not None or decoded.text.encode(decoded.encoding) != like:
            return None
        return text.encode(decoded.encoding)
    except (UnicodeError, ValueError, Unanalysable):
        return None


def read_source(path: str) -> str:
    """A file's text as Python would read it; FileTooLarge over MAX_FILE_BYTES, OSError if unreadable."""
    return read_decoded(path).text


def read_decoded(path: str) -> Decoded:
    """`read_source`, with the codec and what Python says of the bytes."""
    return decode(read_whole_file(path), path)


def _open_regular(path: str):
    """The file open for reading and its size; Unanalysable for anything but a regular file. O_NONBLOCK:
    opening a FIFO (a `*.py` or a `pyproject.toml` put in place of a file) must not wait for a writer."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    handle = open(fd, "rb")
    stat = os.fstat(fd)
    if not S_ISREG(stat.st_mode):
        handle.close()
        raise Unanalysable(path, "not a regular file")
    return handle, stat.st_size


def _read(handle, path: str, limit: int) -> bytes:
    data = handle.read(limit)
    if data is None:  # a regular file that has nothing yet and would wait for it: /proc/kmsg
        raise Unanalysable(path, "reading it would wait (a kernel file, not an ordinary one)")
    return data


def read_whole_file(path: str, limit: int = MAX_FILE_BYTES, what: str = "analysed files") -> bytes:
    """A regular file's bytes; FileTooLarge over `limit` (unread when its size says so), Unanalysable
    for anything but a regular file, OSError if unreadable. Never waits (see `_open_regular`)."""
    handle, size = _open_regular(path)
    with handle:
        if size > limit:
            raise FileTooLarge(path, size, limit, what)
        data = _read(handle, path, limit + 1)
    if len(data) > limit:  # grew while we read it, or a kernel file whose size says 0
        raise FileTooLarge(path, len(data), limit, what)
    return data


def read_regular_bytes(path: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """A regular file's first `limit` bytes, without waiting on a FIFO put in its place; OSError
    (Unanalysable for anything but a regular file) otherwise."""
    handle, _ = _open_regular(path)
    with handle:
        return _read(handle, path, limit)
