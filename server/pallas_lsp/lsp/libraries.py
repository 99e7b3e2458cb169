"""pygls and lsprotocol, imported for the server in less time than a plain import takes.

Importing `lsprotocol.types` is most of the server's cold start (~220 of ~400 ms on an idle core):
it defines ~570 attrs classes, and attrs writes the source of each class's methods (`__init__`,
`__eq__`, `__repr__`, ...) and compiles it: ~90 ms of compiling the same text at every start.
`quick_lsp_imports` keeps the compiled code in the cache folder (marshal, per bytecode version),
keyed by the text and file name attrs compiles, so a later start only loads it; attrs then builds
the very same classes from it (a compiled text is a pure function of those two and the bytecode
version). The file is trusted as a `.pyc` is, and only when it and its folder are the user's alone
(`private_files`: owned by the user, written by nobody else, a regular file, opened without
blocking), since its code is run.

(Pausing the garbage collector during the import, and freezing what it made, saved ~25 ms more on an
idle core but kept ~9 MiB: attrs replaces every class it builds by a copy, and the originals are
cyclic garbage. Collecting them before the freeze cost what the pause saved. Not done.)
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import logging
import marshal
import sys
from pathlib import Path
from types import CodeType

from ..private_files import read_private, write_private

log = logging.getLogger(__name__)


def code_cache_file() -> Path | None:
    """Where the compiled methods are kept (None: caching is off); one file per bytecode version and
    optimization level (`python -O` compiles asserts away)."""
    from ..analysis.disk_cache import cache_dir

    folder = cache_dir()
    if folder is None:
        return None
    optimized = f"-O{sys.flags.optimize}" if sys.flags.optimize else ""
    return folder / f"attrs-code-{sys.implementation.cache_tag}-{importlib.util.MAGIC_NUMBER.hex()}{optimized}.marshal"


class CompileCache:
    """`compile` for attrs' generated methods: the code compiled for the same text and file name in an
    earlier process when there is one, else compiled now and written back by `save`."""

    def __init__(self, path: Path | None):
        self.path = path
        self.known = self._read()
        self.used: dict[bytes, CodeType] = {}
        self.compiled = 0  # texts that were not in the file

    def _read(self) -> dict:
        if self.path is None:
            return {}
        stored = read_private(self.path)
        try:
            table = marshal.loads(stored) if stored is not None else {}
        except (EOFError, ValueError, TypeError):  # cut short or damaged: compile everything
            return {}
        return table if isinstance(table, dict) else {}

    def compile(self, source, filename, mode, *args, **kwargs):
        if args or kwargs or not isinstance(source, str) or not isinstance(filename, str):
            return compile(source, filename, mode, *args, **kwargs)  # not what attrs does: not kept
        key = hashlib.blake2b("\0".join((mode, filename, source)).encode("utf-8", "surrogatepass"),
                              digest_size=16).digest()
        code = self.known.get(key)
        if not isinstance(code, CodeType):
            code = compile(source, filename, mode)
            self.compiled += 1
        self.used[key] = code
        return code

    def save(self) -> None:
        """Write the code of this import when much of it was compiled (no file yet, or attrs or
        lsprotocol upgraded); the file then holds exactly what one import uses, nothing stale. A few
        misses are normal: a frozen class's `__hash__` text holds a string hash, which differs in
        every process, and rewriting the whole file for it would cost more than compiling it."""
        if self.path is None or not self.used or self.compiled * 10 < len(self.used):
            return  # nothing imported here (lsprotocol was already), or little compiled
        try:
            write_private(self.path, marshal.dumps(self.used))  # readers see the old file or the new one
        except (OSError, ValueError) as exc:  # a cache that cannot be written only costs the next start
            log.debug("cannot write %s: %s", self.path, exc)


@contextlib.contextmanager
def quick_lsp_imports():
    """Around the first import of lsprotocol and pygls: attrs compiles through a `CompileCache`; its
    own `compile` is put back afterwards, whatever happens."""
    try:
        import attr._make as attrs_make  # where attrs compiles what it generates
    except ImportError:
        attrs_make = None
    if attrs_make is None or "compile" in vars(attrs_make):
        yield None
        return
    cache = CompileCache(code_cache_file())
    attrs_make.compile = cache.compile  # a module global: found before the builtin
    try:
        yield cache
    finally:
        del attrs_make.compile
        cache.save()
