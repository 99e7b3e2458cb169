"""Writing fixed text back to disk without ever losing the user's code.

The new text goes to a temporary file in the same folder (same file system, so the rename is
atomic), is flushed to disk, gets the original's owner, group and permissions (a file that would
change hands, which only root can prevent for another user's file, is not rewritten), and replaces the original by
`os.replace` only if the file still holds exactly the text the fixes were computed from: same
bytes, and the same stamp (inode, size, mtime) just before the rename as when it was checked. A
failure at any point (disk full, quota, `ulimit -f`, a kill) leaves either the old file or the new
one, never a mix; the temporary file is removed on every error this process survives.

The files of one fix (a kernel body in one module, its launch in another) are written together or
not at all (`write_group`): each is prepared (checked, its temporary file written) before the first
is renamed, and a rename that still fails puts back the ones renamed before it.
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


@dataclass
class Prepared:
    """A file's new bytes in a temporary file beside it, every check passed: only the rename is left."""

    path: str
    target: str  # the file a symlink names: it is replaced, the link kept
    temporary: str | None
    before: bytes
    stamp: tuple
    backup: str | None = None  # the old bytes, ready to be renamed back over a file of a group

    def discard(self) -> None:
        _remove((self.temporary, self.backup))

    def unchanged(self) -> Skipped | None:
        """None if the file still holds the bytes and stamp it was prepared from (just before the rename)."""
        try:
            now, now_stamp = _read(self.target)
        except OSError as exc:
            return Skipped(self.path, f"writing failed: {exc.strerror or exc}; the file is unchanged")
        if now != self.before or now_stamp != self.stamp:
            return Skipped(self.path, "it changed while the fixes were written (run again to fix the new text)")
        return None


def prepare(path: str, old_text: str, new_text: str, keep_old: bool = False) -> Prepared | Skipped:
    """Every check, and the new bytes written (flushed, owner and mode given) to a temporary file
    beside `path`; with `keep_old`, the old bytes too, so that a file of a group written before
    another one failed can be put back by a rename. A `Skipped` (nothing left behind) if the file
    changed since `old_text` was read, is read-only, cannot be encoded as it was, or a write failed."""
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
    if not original.st_mode & 0o222 or not os.access(target, os.W_OK):  # the mode bits count for root too
        return Skipped(path, "it is read-only")
    made: list[str] = []
    try:
        made.append(_temporary_copy(target, new_bytes, original))
        backup = _temporary_copy(target, before, original) if keep_old else None
    except _Refused as refused:
        _remove(made)
        return Skipped(path, str(refused))
    return Prepared(path, target, made[0], before, stamp, backup)


class _Refused(Exception):
    """No temporary file was left; the message says why, for the user."""


def _temporary_copy(target: str, data: bytes, original: os.stat_result) -> str:
    """A hidden file beside `target` holding `data`, flushed to disk, with `original`'s owner, group
    and permission bits."""
    folder, name = os.path.split(target)
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".pallas-lsp-tmp", dir=folder)
    except OSError as exc:
        raise _Refused(f"cannot create a temporary file beside it: {exc.strerror or exc}") from exc
    try:
        if not _give_owner(fd, original):
            os.close(fd)
            raise _Refused(f"it belongs to {_owner(original)}, and a rewritten file would not "
                           "(run as its owner, or as root)")
        with open(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, original.st_mode & 0o7777)
    except OSError as exc:
        _remove([temporary])
        raise _Refused(f"writing failed: {exc.strerror or exc}; the file is unchanged") from exc
    except BaseException:
        _remove([temporary])
        raise
    return temporary


def _remove(paths) -> None:
    for path in paths:
        if path is not None:
            try:
                os.unlink(path)
            except OSError:
                pass


def write_group(changes: dict[str, tuple[str, str]]) -> Skipped | None:
    """Write every file of `changes` ({path: (old text, new text)}) or none, as git and ruff never
    write half a change: all are prepared and checked before the first rename. A rename that still
    fails puts the files renamed before it back (their old bytes, renamed over them). The `Skipped`
    of the file that stopped the group, or None when all were written."""
    prepared: list[Prepared] = []
    for path, (old_text, new_text) in changes.items():
        made = prepare(path, old_text, new_text, keep_old=len(changes) > 1)
        if isinstance(made, Skipped):
            return _abandon(prepared, made)
        prepared.append(made)
    for made in prepared:
        changed = made.unchanged()
        if changed is not None:
            return _abandon(prepared, changed)
    for done, made in enumerate(prepared):
        try:
            os.replace(made.temporary, made.target)
        except OSError as exc:
            return _abandon(prepared, Skipped(made.path, f"writing failed: {exc.strerror or exc}; "
                                                         + _put_back(prepared[:done])))
    for made in prepared:
        made.temporary = None
        made.discard()
        _sync_folder(os.path.dirname(made.target))
    return None


def _abandon(prepared: list[Prepared], skipped: Skipped) -> Skipped:
    for made in prepared:
        made.discard()
    return skipped


def _put_back(written: list[Prepared]) -> str:
    """Rename the old bytes back over files of a group already written; says what became of them."""
    if not written:
        return "the file is unchanged"
    failed = []
    for made in reversed(written):
        made.temporary = None  # renamed: it is the file now
        try:
            os.replace(made.backup, made.target)
            _sync_folder(os.path.dirname(made.target))
        except OSError as exc:  # its old bytes stay beside it, named in the message
            failed.append(f"{made.path} ({exc.strerror or exc}; its old text is in {made.backup})")
        made.backup = None
    if failed:
        return "the file is unchanged, but files written before it could not be put back: " + ", ".join(failed)
    return "the file is unchanged, and the files written before it are put back"


def write_fixed_file(path: str, old_text: str, new_text: str) -> Skipped | None:
    """Replace `path`'s `old_text` by `new_text` atomically; a `Skipped` (nothing written) if it
    cannot be done safely: the file changed meanwhile, is read-only, cannot be encoded as it was,
    or the write failed."""
    return write_group({path: (old_text, new_text)})


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
