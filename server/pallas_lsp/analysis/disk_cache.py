"""Answers kept on disk between runs, in the user's cache folder.

`$PALLAS_LSP_CACHE_DIR`, else `$XDG_CACHE_HOME/pallas-lsp`, else `~/.cache/pallas-lsp`. Each cache
file is written whole to a temporary file and renamed over the old one, so processes running at the
same time never read a half-written file (the last writer wins; a lost update is only recomputed).
A file that cannot be read or parsed is ignored: a cache never changes an answer, it only saves
work, and every entry carries what it was computed from (file stamps) and is checked against it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

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
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
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
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump({"format": FORMAT, "key": list(key), "data": data}, out, separators=(",", ":"))
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as exc:
        log.debug("cannot write the cache file %s: %s", path, exc)
