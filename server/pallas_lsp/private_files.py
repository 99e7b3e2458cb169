"""Files that only this user can have written: the cache folder's files and the `--tcp` token.

A cache file decides answers (a forged `jedi-imports-*.json` can make `check` pass a broken kernel)
and the attrs code cache is executed, so a file that another user could write must not be used; and
a FIFO under a cache file's name must not hang us. So a folder is opened once, without following a
symbolic link, and used only when it is this user's and nobody else may write it; its files are then
reached through that open folder (no path can be swapped underneath), opened without following a
link and without blocking, and used only when they are regular files of this user that nobody else
may write. Anything else is skipped with one warning. Writes go to a fresh temporary file (`O_EXCL`)
in the checked folder, renamed over the name: a planted link or FIFO is replaced, never followed.
Stdlib only: the server reads its code cache before anything else is imported.
"""

from __future__ import annotations

import logging
import os
import stat

log = logging.getLogger(__name__)

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_READ_FLAGS = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_FOLDER_FLAGS = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
OTHERS_WRITE = 0o022  # group or others may write: they could have put anything there

_warned: set[str] = set()


def warn_once(message: str, logger: logging.Logger = log) -> None:
    """A warning said once per process (the CLI's run, the server's life), however often it recurs."""
    if message not in _warned:
        _warned.add(message)
        logger.warning("%s", message)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symbolic link"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "of an unknown kind"


def unfit(found: os.stat_result, folder: bool = False, forbidden: int = OTHERS_WRITE) -> str | None:
    """Why a file (or folder) with this `fstat`/`lstat` may not be trusted, or None."""
    if folder and not stat.S_ISDIR(found.st_mode):
        return f"it is {_kind(found.st_mode)}, not a folder"
    if not folder and not stat.S_ISREG(found.st_mode):
        return f"it is {_kind(found.st_mode)}, not a regular file"
    geteuid = getattr(os, "geteuid", None)  # not on Windows, where files have no such owner and bits
    if geteuid is None:
        return None
    if found.st_uid != geteuid():
        return f"it belongs to another user (uid {found.st_uid})"
    if stat.S_IMODE(found.st_mode) & forbidden:
        return f"others may write it (mode {stat.S_IMODE(found.st_mode):04o})"
    return None


class PrivateFolder:
    """An open folder that is this user's and that nobody else may write; names are looked up in it."""

    def __init__(self, path: str, fd: int):
        self.path = path
        self.fd = fd

    @classmethod
    def open(cls, path: str | os.PathLike, create: bool = False) -> PrivateFolder | None:
        """The folder, or None: missing or not creatable (quietly), or not trusted (one warning says why)."""
        path = os.fspath(path)
        if os.open not in os.supports_dir_fd:
            return None  # no way to keep names inside a checked folder here: no cache
        try:
            return cls.checked(path, create)
        except Untrusted as exc:
            warn_once(f"not using the cache folder {path}: {exc}")
        except OSError as exc:
            log.debug("cannot use %s: %s", path, exc)
        return None

    @classmethod
    def checked(cls, path: str, create: bool = False) -> PrivateFolder:
        """The folder (made, mode 700, if missing and `create`); raises Untrusted or OSError."""
        if create:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:
                pass
        try:
            fd = os.open(path, _FOLDER_FLAGS)
        except OSError as exc:
            if isinstance(exc, FileNotFoundError):
                raise
            try:
                why = unfit(os.lstat(path), folder=True)
            except OSError:
                why = None
            raise Untrusted(why or exc.strerror or str(exc)) from None
        why = unfit(os.fstat(fd), folder=True)
        if why is not None:
            os.close(fd)
            raise Untrusted(why)
        return cls(path, fd)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> PrivateFolder:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def where(self, name: str) -> str:
        return os.path.join(self.path, name)

    def read(self, name: str) -> bytes | None:
        """The bytes of `name`, or None: missing, or not trusted (one warning says why)."""
        try:
            return read_own(name, dir_fd=self.fd)[0]
        except FileNotFoundError:
            return None
        except (Untrusted, OSError) as exc:
            why = str(exc) if isinstance(exc, Untrusted) else exc.strerror or str(exc)
        warn_once(f"ignoring the cache file {self.where(name)}: {why}")
        return None

    def write(self, name: str, data: bytes) -> None:
        """Replace `name` by a file holding `data` (mode 600), atomically: readers see the old file or
        the new one. Raises OSError."""
        temporary = f".{name}.{os.urandom(6).hex()}.tmp"
        self.create(temporary, data)
        try:
            os.replace(temporary, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            self.remove(temporary)
            raise

    def create(self, name: str, data: bytes) -> None:
        """A new file `name` (mode 600) holding `data`; fails if anything has that name. Raises OSError."""
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600,
                     dir_fd=self.fd)
        try:
            with os.fdopen(fd, "wb", closefd=False) as out:
                out.write(data)
        except BaseException:
            os.close(fd)
            self.remove(name)
            raise
        os.close(fd)

    def remove(self, name: str) -> None:
        try:
            os.unlink(name, dir_fd=self.fd)
        except FileNotFoundError:
            pass

    def restrict(self) -> None:
        """Make the folder itself readable by this user only (the open folder: no link is followed)."""
        if stat.S_IMODE(os.fstat(self.fd).st_mode) != 0o700:
            os.fchmod(self.fd, 0o700)


class Untrusted(Exception):
    """A file that is there but may not be used; the message says why."""


def read_own(path: str, dir_fd: int | None = None, forbidden: int = OTHERS_WRITE) -> tuple[bytes, os.stat_result]:
    """The bytes and `fstat` of a regular file of this user's that no one else may write (`forbidden`
    mode bits), opened without following a link or blocking. Raises Untrusted or OSError."""
    # lstat first: a FIFO or a device is never opened at all, and a link is named as one
    why = unfit(os.stat(path, dir_fd=dir_fd, follow_symlinks=False), forbidden=forbidden)
    if why is None:
        fd = os.open(path, _READ_FLAGS, dir_fd=dir_fd)
        try:
            found = os.fstat(fd)
            why = unfit(found, forbidden=forbidden)  # what was opened, whatever was swapped in meanwhile
            if why is None:
                chunks = []
                while chunk := os.read(fd, 1 << 20):
                    chunks.append(chunk)
                return b"".join(chunks), found
        finally:
            os.close(fd)
    raise Untrusted(why)


def read_private(path: str | os.PathLike) -> bytes | None:
    """The bytes of a cache file, when it and its folder are this user's alone; else None."""
    path = os.fspath(path)
    folder = PrivateFolder.open(os.path.dirname(path) or ".")
    if folder is None:
        return None
    with folder:
        return folder.read(os.path.basename(path))


def write_private(path: str | os.PathLike, data: bytes) -> None:
    """Replace a cache file atomically, in a folder that is this user's alone (created if missing);
    a folder that is not is skipped (warned about once). Raises OSError."""
    path = os.fspath(path)
    folder = PrivateFolder.open(os.path.dirname(path) or ".", create=True)
    if folder is None:
        return
    with folder:
        folder.write(os.path.basename(path), data)
