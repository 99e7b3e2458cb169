"""Writing fixed text back to disk without ever losing the user's code.

The new text goes to a temporary file in the same folder (same file system, so the rename is
atomic), is flushed to disk, gets the original's owner, group and permissions (a file that would
change hands, which only root can prevent for another user's file, is not rewritten), and replaces the original by
`os.replace` only if the file still holds exactly the text the fixes were computed from: same
bytes, and the same stamp (inode, size, mtime) just before the rename as when it was checked. A
failure at any point (disk full, quota, `ulimit -f`, a kill) leaves either the old file or the new
one, never a mix; the temporary file is removed on every error this process survives.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

from ..source_text import encode_source


@dataclass(frozen=True)
class Skipped:
    """Why a file was not rewritten, for the user."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path} not rewritten: {self.reason}"


def _stamp(stat: os.stat_result) -> tuple[int, int, int, int]:
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns


def _read(path: str) -> tuple[bytes, tuple]:
    with open(path, "rb") as handle:
        stat = os.fstat(handle.fileno())
        return handle.read(), _stamp(stat)


def write_fixed_file(path: str, old_text: str, new_text: str) -> Skipped | None:
    """Replace `path`'s `old_text` by `new_text` atomically; a `Skipped` (nothing written) if it
    cannot be done safely: the file changed meanwhile, is read-only, cannot be encoded as it was,
    or the write failed."""
    target = os.path.realpath(path)  # a symlink keeps pointing at the (rewritten) file it names
    try:
        before, stamp = _read(target)
    except OSError as exc:
        return Skipped(path, f"cannot read it: {exc.strerror or exc}")
    if encode_source("", before) is None:
        return Skipped(path, "its bytes do not decode losslessly in its encoding")
    if encode_source(old_text, before) != before:
        return Skipped(path, "it changed while the fixes were computed (run again to fix the new text)")
    new_bytes = encode_source(new_text, before)
    if new_bytes is None:
        return Skipped(path, "the fixed text cannot be encoded in the file's encoding")
    original = os.stat(target)
    mode = original.st_mode & 0o7777
    if not mode & 0o222 or not os.access(target, os.W_OK):  # the mode bits count for root too
        return Skipped(path, "it is read-only")
    folder, name = os.path.split(target)
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".pallas-lsp-tmp", dir=folder)
    except OSError as exc:
        return Skipped(path, f"cannot create a temporary file beside it: {exc.strerror or exc}")
    try:
        if not _give_owner(fd, original):
            os.unlink(temporary)
            return Skipped(path, f"it belongs to {_owner(original)}, and a rewritten file would not "
                                 "(run as its owner, or as root)")
        with open(fd, "wb") as out:
            out.write(new_bytes)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        now, now_stamp = _read(target)
        if now != before or now_stamp != stamp:
            os.unlink(temporary)
            return Skipped(path, "it changed while the fixes were written (run again to fix the new text)")
        os.replace(temporary, target)
    except OSError as exc:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        return Skipped(path, f"writing failed: {exc.strerror or exc}; the file is unchanged")
    _sync_folder(folder)
    return None


def _give_owner(fd: int, original: os.stat_result) -> bool:
    """Give the temporary file the original's owner and group (a new file is its writer's: root's
    `--fix` made another user's file `root:root`); False where this user may not."""
    made = os.fstat(fd)
    if (made.st_uid, made.st_gid) == (original.st_uid, original.st_gid):
        return True
    try:  # root may give any owner; others only a group of theirs, to a file of theirs
        os.fchown(fd, original.st_uid, original.st_gid)
    except PermissionError:
        return False
    return True


def _owner(stat: os.stat_result) -> str:
    """`user:group` by name where the system knows them, else by number."""
    import grp
    import pwd

    try:
        user = pwd.getpwuid(stat.st_uid).pw_name
    except KeyError:
        user = str(stat.st_uid)
    try:
        group = grp.getgrgid(stat.st_gid).gr_name
    except KeyError:
        group = str(stat.st_gid)
    return f"{user}:{group}"


def _sync_folder(folder: str) -> None:
    """Make the rename itself durable (best effort: not every file system lets a folder be synced)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
