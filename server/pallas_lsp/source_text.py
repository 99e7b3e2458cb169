"""Source files as Python reads them, and lines as Python and LSP count them.

Python decodes a source file by its BOM or coding cookie (PEP 263, `tokenize.open`), not as plain
UTF-8; and it (like LSP) ends a line only at `\\n`, `\\r\\n` or `\\r`, never at the form feeds, vertical
tabs, NEL or U+2028 that `str.splitlines()` also splits at. Getting either wrong shifts every later
finding, or reports a false syntax error.
"""

from __future__ import annotations

import codecs
import io
import os
import re
import tokenize
from stat import S_ISREG

MAX_FILE_BYTES = 5_000_000  # larger files are skipped, and the user is told so (see FileTooLarge)

LINE_BREAK = re.compile(r"\r\n|\r|\n")


class Unanalysable(OSError):
    """A file the analyzer does not read; `reason` says why, for the user."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = path, reason


class FileTooLarge(Unanalysable):
    """A file over MAX_FILE_BYTES: not analysed (a huge generated file would stall every analysis)."""

    def __init__(self, path: str, size: int):
        super().__init__(path, f"{size:,} bytes, over the {MAX_FILE_BYTES // 1_000_000} MB limit for analysed files")
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


def source_encoding(data: bytes) -> str:
    """The encoding Python would decode these bytes with (BOM, coding cookie, else UTF-8).

    A cookie naming an unknown codec (Python refuses such a file) counts as UTF-8.
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except (SyntaxError, LookupError):
        return "utf-8"
    try:
        return codecs.lookup(encoding).name if encoding != "utf-8-sig" else encoding
    except LookupError:
        return "utf-8"


def decode_source(data: bytes) -> str:
    """Text as the analyzer sees it: Python's decoding, undecodable bytes replaced, never an exception.

    Line endings are kept as they are, so the text maps back to the file byte for byte.
    """
    return data.decode(source_encoding(data), errors="replace")


def encode_source(text: str, like: bytes) -> bytes | None:
    """`text` encoded as the file `like` was (same BOM / cookie codec); None if it cannot be.

    None too when `like` itself does not decode losslessly: rewriting it would change bytes the
    user never saw.
    """
    encoding = source_encoding(like)
    try:
        if like.decode(encoding).encode(encoding) != like:
            return None
        return text.encode(encoding)
    except (UnicodeDecodeError, UnicodeEncodeError):
        return None


def read_source(path: str) -> str:
    """A file's text as Python would read it; FileTooLarge over MAX_FILE_BYTES, OSError if unreadable."""
    # O_NONBLOCK: opening a FIFO named `*.py` must not wait for a writer.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with open(fd, "rb") as handle:
        stat = os.fstat(fd)
        if not S_ISREG(stat.st_mode):
            raise Unanalysable(path, "not a regular file")
        size = stat.st_size
        if size > MAX_FILE_BYTES:
            raise FileTooLarge(path, size)
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:  # grew while we read it
        raise FileTooLarge(path, len(data))
    return decode_source(data)
