"""File names and free text as a terminal may show them: nothing in a name reaches it raw.

A name holding ESC, CR, BEL, a newline or a C1 control (`\\x9b`, a one-byte CSI) printed bare
would drive the terminal: `\\x1b[2K\\rAll checks passed!` erases "Found 2 errors" and writes over
it. Names are written as git writes them (`core.quotePath`): in double quotes, with C escapes and
octal bytes; other text (messages, a traced program's output) as Python writes the characters.
"""

from __future__ import annotations

import os
import re

# Characters a terminal acts on or that change what the line seems to say: C0 controls, DEL, C1
# controls, line and paragraph separators, bidirectional overrides and isolates, and lone
# surrogates (a name's undecodable byte, which would go out raw, `\x9b` a CSI).
_UNSAFE = ("\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff")
_UNSAFE_CHARACTER = re.compile(f"[{_UNSAFE}]")

# C escapes git uses in quoted paths; other bytes that need quoting are written in octal.
_GIT_ESCAPES = {0x07: "\\a", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0B: "\\v", 0x0C: "\\f", 0x0D: "\\r",
                0x22: '\\"', 0x5C: "\\\\"}


def _escaped_bytes(data: bytes, keep) -> str:
    return "".join(chr(byte) if keep(byte) else _GIT_ESCAPES.get(byte) or f"\\{byte:03o}" for byte in data)


def git_quoted(path: str) -> str:
    """A path as git writes it in a patch (`core.quotePath`, the default): in double quotes, with C
    escapes and octal bytes, when it holds a control character, `"`, `\\`, DEL or a non-ASCII byte
    (`git apply` reads a bare name up to the end of the line: a newline in it broke the patch)."""
    data = os.fsencode(path)
    if all(0x20 <= byte < 0x7F and byte not in _GIT_ESCAPES for byte in data):
        return path
    return '"' + _escaped_bytes(data, lambda byte: 0x20 <= byte < 0x7F and byte not in _GIT_ESCAPES) + '"'


def quoted_name(name: str) -> str:
    """`name` as printed to a terminal: as is when it holds nothing unsafe (non-ASCII letters stay
    readable), else quoted as git quotes it, the unsafe characters' bytes as C escapes or octal
    (`"\\033[2K\\rAll checks passed!\\n.py"`). A name that starts with `"` is quoted too, so that
    a quoted name cannot be faked."""
    if not _UNSAFE_CHARACTER.search(name) and not name.startswith('"'):
        return name
    return '"' + "".join(_escaped_bytes(os.fsencode(ch), lambda byte: False) if ch in '"\\' or _UNSAFE_CHARACTER.match(ch)
                         else ch for ch in name) + '"'


def visible(text: str, keep: str = "") -> str:
    """Free text with every unsafe character but those in `keep` written as Python writes it
    (`\\x1b`, `\\u202e`, `\\udc9b`): a message that holds a name, a traced program's output."""
    return _UNSAFE_CHARACTER.sub(lambda m: m.group() if m.group() in keep else repr(m.group())[1:-1], text)
