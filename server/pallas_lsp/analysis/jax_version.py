"""The jax version of the analysed environment, read from its package metadata (jax is never imported).

Rules whose semantics changed between releases ask `jax_version(project)`; None means the environment
has no jax (or it could not be asked), and rules then assume the newest behaviour they know.
"""

from __future__ import annotations

import glob
import logging
import os
import re
from functools import lru_cache

from . import disk_cache

log = logging.getLogger(__name__)

Version = tuple[int, ...]


def parse_version(text: str) -> Version | None:
    """`0.11.2` -> (0, 11, 2); `0.12.0.1` -> (0, 12, 0, 1); pre-release tails (`rc1`, `.dev…`) are dropped."""
    match = re.match(r"\s*(\d+(?:\.\d+)*)", text)
    return tuple(int(p) for p in match.group(1).split(".")) if match else None


def version_from_metadata(path: str) -> Version | None:
    """The `Version:` header of a `*.dist-info/METADATA` file."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("Version:"):
                    return parse_version(line.split(":", 1)[1])
                if not line.strip():
                    break  # the headers end at the first blank line
    except OSError:
        return None
    return None


@lru_cache(maxsize=16)
def _version_on_path(sys_path: tuple[str, ...]) -> tuple[Version, str, tuple[str, ...]] | None:
    """The first jax version on the path, its METADATA file and the folders searched up to it."""
    for index, folder in enumerate(sys_path):
        for metadata in sorted(glob.glob(os.path.join(glob.escape(folder), "jax-*.dist-info", "METADATA"))):
            version = version_from_metadata(metadata)
            if version is not None:
                return version, metadata, sys_path[:index + 1]
    return None


def jax_version(project) -> Version | None:
    """jax's version in the project's environment, found through that environment's `sys.path`.

    Kept on disk per interpreter (asking it for its path means starting it, most of a first
    analysis when the import answers are cached too), checked against the stamps of the METADATA
    file and of every path folder searched up to it: an upgrade, or a jax installed in front of it,
    changes one of them."""
    cached = getattr(project, "_jax_version", False)
    if cached is not False:
        return cached
    key = project.interpreter_key()
    stored = _stored_version(disk_cache.read("jax-version", *key)) if key else None
    version, metadata = stored if stored is not None else (None, None)
    if version is None:
        try:
            sys_path = tuple(project.interpreter_sys_path())
            found = _version_on_path(sys_path)
        except Exception as exc:  # an unusable environment is reported elsewhere; here it only means "unknown"
            log.debug("jax version unknown: %s", exc)
            found = None
        if found is not None:
            version, metadata, folders = found
            if key:
                disk_cache.write("jax-version", [list(version), [[f, disk_cache.stamp(f)] for f in folders],
                                                 metadata, disk_cache.stamp(metadata)], *key)
    project._jax_version = version
    project._jax_metadata = metadata if version is not None else None
    return version


def jax_package_folder(project) -> str | None:
    """The analysed environment's `jax` package folder (beside the METADATA the version was read from),
    for facts read from jax's own source files; None if there is no jax or it is not installed there."""
    if getattr(project, "_jax_version", False) is False:
        jax_version(project)
    metadata = getattr(project, "_jax_metadata", None)
    if not metadata:
        return None
    folder = os.path.join(os.path.dirname(os.path.dirname(metadata)), "jax")
    return folder if os.path.isdir(folder) else None


def _stored_version(entry) -> tuple[Version, str] | None:
    try:
        version, folders, metadata, stamp = entry
        if disk_cache.stamp(metadata) != stamp or any(disk_cache.stamp(f) != s for f, s in folders):
            return None
        parsed = tuple(int(part) for part in version)
        return (parsed, metadata) if parsed else None
    except (TypeError, ValueError):
        return None


def format_version(version: Version | None) -> str:
    return ".".join(map(str, version)) if version else "unknown"
