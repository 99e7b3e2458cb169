"""Answers kept on disk between runs, in the user's cache folder.

`$PALLAS_LSP_CACHE_DIR`, else `$XDG_CACHE_HOME/pallas-lsp`, else `~/.cache/pallas-lsp`. Each cache
file is written whole to a temporary file and renamed over the old one, so processes running at the
same time never read a half-written file (the last writer wins; a lost update is only recomputed).
A file that cannot be read or parsed is ignored: a cache never changes an answer, it only saves
work, and every entry carries what it was computed from (file stamps) and is checked against it.
The folder and its files are used only when they are this user's alone (`private_files`): a file
another user could write could make a broken kernel pass.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path

from ..private_files import read_private, write_private

log = logging.getLogger(__name__)

FORMAT = 1


def cache_dir() -> Path | None:
    """The cache folder, or None when caching is off (`PALLAS_LSP_CACHE_DIR` set to an empty string)."""
    explicit = os.environ.get("PALLAS_LSP_CACHE_DIR")
    if explicit is not None:
        return Path(explicit) if explicit else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pallas-lsp"


def cache_file(kind: str, *key: str) -> Path | None:
    folder = cache_dir()
    if folder is None:
        return None
    digest = hashlib.sha256("\0".join(key).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return folder / f"{kind}-{digest}.json"


def stamp(path: str | None) -> list[int] | None:
    """What an entry computed from a file or folder is checked against: its mtime and size (None: gone)."""
    try:
        found = os.stat(path) if path else None
    except OSError:
        return None
    return [found.st_mtime_ns, found.st_size] if found else None


def read(kind: str, *key: str):
    """The data last written for (kind, key), or None."""
    path = cache_file(kind, *key)
    if path is None:
        return None
    try:
        stored = read_private(path)
        data = json.loads(stored) if stored is not None else None
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("key") != list(key):
        return None
    return data.get("data")


def write(kind: str, data, *key: str) -> None:
    """Replace the data for (kind, key) atomically; failures are logged, never raised."""
    path = cache_file(kind, *key)
    if path is None:
        return
    try:
        text = json.dumps({"format": FORMAT, "key": list(key), "data": data}, separators=(",", ":"))
        write_private(path, text.encode())  # ASCII: json escapes the rest
    except OSError as exc:
        log.debug("cannot write the cache file %s: %s", path, exc)
