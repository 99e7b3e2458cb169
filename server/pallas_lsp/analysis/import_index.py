"""The workspace import index: who imports which module, and which files can matter at all.

Built from each workspace file's import statements (a scan of statement starts, not a substring
search of module names) plus two text facts: does the file mention Pallas or `get_global`, and does
it mention interpret mode. It answers "which workspace modules import this one" (where a kernel
body may be launched: PAL002, kernel parameter types, the fixes' call sites) and "can this file have
findings" (it mentions Pallas or `get_global`, or imports a workspace module that can), without
parsing any file and without asking jedi anything.

Entries are kept per file: unsaved texts as they change, files on disk by (mtime, size). With
`trust_events` (a language server whose client reports file changes, `check`) a file on disk is
read again only after `forget(path)` (its stamp is compared once per process); otherwise its stamp
is compared on every question. Entries of files on
disk are also kept in a cache file (see `disk_cache`), so a big workspace is scanned once, not at
every start.

A question about one module's importers does not need every file's facts: a file none of whose
import statements contains the module's last name cannot import it (`imports_mention`: a
`bytes.find`, then only the statements before its last mention, no names split out), so only the
files whose do are scanned, and the others are kept as `Unscanned` (the words their imports lack:
asking again about the same module reads nothing, in this process or, from the cache file, the
next). The first diagnostics of a kernel file in a big workspace wait for that only;
`complete_some` scans the rest later (a server's idle time), and questions about every file
(`can_matter` of a file that does not mention Pallas) complete it, as do questions about more
than `PREFILTERED_MODULES` modules (reading every file again per module would soon cost more).
"""

from __future__ import annotations

import logging
import os
import re
import time
from dataclasses import dataclass

from . import disk_cache, reads
from .reads import INDEX
from ..source_text import MAX_FILE_BYTES

log = logging.getLogger(__name__)

# `import a.b as c, d` and `from .a import (b as c, d)` at a statement start, looked for from each
# `import` (bytes.find; one regex over whole files is ten times slower). Inside a string this can
# match too: the index then knows one import too many, never one too few.
_STATEMENT = re.compile(
    rb"[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]*(\([^)]*\)|(?:[^\n#;\\]|\\\n)*)"
    rb"|import[ \t]+((?:[^\n#;\\]|\\\n)*))")
_COMMENT = re.compile(rb"#[^\n]*")
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\Z")


@dataclass(frozen=True)
class FileFacts:
    """What the index knows about one file."""

    imports: tuple[str, ...]  # dotted names as written ("." prefixes kept): `from a import b` gives a, a.b
    mentions_pallas: bool  # "pallas" or "get_global" appears in the text
    mentions_interpret: bool  # "interpret" and "import" appear in the text


@dataclass(frozen=True)
class Unscanned:
    """A file on disk whose facts are not computed yet: only words none of its import statements
    contains (so it imports no module of that last name)."""

    absent: frozenset[str]


def scan(data: bytes) -> FileFacts:
    """The facts of one file's text (UTF-8 bytes)."""
    imports: dict[str, None] = {}
    if b"import" in data:
        for start in _statement_starts(data):
            match = _STATEMENT.match(data, start)
            if match is None:
                continue
            base, names, plain = match.group(1), match.group(2), match.group(3)
            if plain is not None:
                for part in _names(plain):
                    name = part.split(" as ")[0].strip()
                    if _DOTTED.match(name):
                        imports.setdefault(name)
                continue
            module = base.decode("ascii", "replace")
            if module.strip(".") and not _DOTTED.match(module.lstrip(".")):
                continue
            imports.setdefault(module)
            for part in _names(names):
                name = part.split(" as ")[0].strip()
                if _DOTTED.match(name):
                    imports.setdefault(module + name if module.endswith(".") else f"{module}.{name}")
    return FileFacts(tuple(imports), b"pallas" in data or b"get_global" in data,
                     b"interpret" in data and b"import" in data)


def imports_mention(data: bytes, word: bytes) -> bool:
    """Whether the text of some import statement (as `scan` finds them) contains `word`: if not,
    the file imports nothing whose last name is `word`. Cheaper than `scan` (no names are split
    out, and only statements starting before the last mention of `word` are looked at): most
    files mentioning a module name do so in prose or code, not in an import."""
    last = data.rfind(word)
    if last < 0:
        return False
    for start in _statement_starts(data, last):
        match = _STATEMENT.match(data, start)
        if match is not None and data.find(word, start, match.end()) >= 0:
            return True
    return False


def _statement_starts(data: bytes, stop: int | None = None):
    """Where each statement holding `import` starts (its line, or after a `;`), once each, up to
    `stop`; the statement pattern then says whether it is an import."""
    seen = -1
    position = data.find(b"import")
    while position >= 0:
        line = data.rfind(b"\n", 0, position) + 1
        start = data.rfind(b";", line, position) + 1 or line
        if stop is not None and start > stop:
            return
        if start != seen:
            seen = start
            yield start
        position = data.find(b"import", position + 6)


def _names(text: bytes) -> list[str]:
    text = _COMMENT.sub(b"", text).replace(b"\\\n", b" ").strip(b"() \t\r\n")
    return [" ".join(part.decode("utf-8", "replace").split()) for part in text.split(b",")]


def _read(path: str) -> tuple[tuple[int, int], bytes]:
    """A file's stamp and its first `MAX_FILE_BYTES + 1` bytes (plain `os.read`: a third faster than
    a buffered file over thousands of small files)."""
    handle = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        stat = os.fstat(handle)
        # One read: a regular file gives what it has up to the size asked for.
        return (stat.st_mtime_ns, stat.st_size), os.read(handle, min(stat.st_size, MAX_FILE_BYTES) + 1)
    finally:
        os.close(handle)


def absolute(name: str, package: str | None) -> str | None:
    """A relative import's absolute name (`package` is the importing file's package); None if it leaves it."""
    if not name.startswith("."):
        return name
    level = len(name) - len(name.lstrip("."))
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    parts = parts[: len(parts) - (level - 1)]
    rest = name[level:]
    if rest:
        parts.append(rest)
    return ".".join(parts) or None


# Importer questions about this many modules are answered without scanning every file; the next
# module's scans them all (a pass over files that are not scanned reads them, ~1/3 of a whole scan).
PREFILTERED_MODULES = 3


class ImportIndex:
    """Per-file import facts of a project's workspace files and unsaved texts (see the module docstring)."""

    def __init__(self, project):
        self.project = project
        self._read_key = (id(project), INDEX)  # noted by what reads the index's whole-workspace answers
        self.trust_events = False
        self._disk: dict[str, tuple[tuple[int, int] | None, FileFacts | Unscanned]] = {}
        self._unsaved: dict[str, tuple[str, FileFacts]] = {}
        self._answers: dict = {}  # memo of whole-workspace answers, cleared when any entry changes
        self._cache_dirty = False
        self._loaded = False
        self._everything: dict[str, FileFacts] | None = None  # with trust_events: every file's facts
        self._forgotten: set[str] = set()  # not taken back from the cache file when merging on save
        # Files whose stamp this process has seen: trusting file events, only these are not stat'ed
        # again (a file may have changed while no process ran: the cache file's stamp is checked once).
        self._checked: set[str] = set()
        # Without file events, the files whose stamp the current analysis compared (`new_analysis`):
        # one analysis asks about importers dozens of times, and each question compared every
        # workspace file's stamp again (600 stats a question in a package of 600 files).
        self._checked_now: set[str] = set()
        # `_scanned`'s answers in the current analysis, while no text changes (its stamps are compared once
        # an analysis anyway): word -> (the project's change count, facts). A keystroke asked it five times.
        self._scanned_now: dict = {}
        self._absent_sets: dict[tuple[str, ...], Unscanned] = {}  # one `Unscanned` per word set (sorted)
        self._incomplete = False  # a question met files left unscanned (`complete_some`)
        self._prefiltered: set[str] = set()  # the last names `_naming` answered without scanning every file

    # ---- entries ----------------------------------------------------------------------------

    def facts(self, path: str) -> FileFacts | None:
        """The facts of a file (its unsaved text if there is one); None when it cannot be read."""
        return self._facts(path, None)

    def _facts(self, path: str, word: str | None) -> FileFacts | None:
        """`facts(path)`; with `word`, also None, without scanning the file, when none of its import
        statements contains `word` (it imports no module whose last name is `word`)."""
        if not self._loaded:  # else a file asked about before the first whole-workspace question is
            self._load()      # read again, and the cache file rewritten after every analysis of `check`
        text = self.project.overlay.get(path)
        if text is not None:
            entry = self._unsaved.get(path)
            if entry is None or entry[0] is not text:
                if entry is not None and entry[0] == text:
                    self._unsaved[path] = (text, entry[1])
                    return entry[1]
                entry = (text, scan(text.encode("utf-8", "surrogatepass")))
                previous = self._unsaved.get(path) or self._disk.get(path) or (None, None)
                self._changed(path, entry[1], previous[1])
                self._unsaved[path] = entry
            return entry[1]
        unsaved = self._unsaved.pop(path, None)
        if unsaved is not None and (path not in self._disk or self._disk[path][1] != unsaved[1]):
            self._answers_changed()
        entry = self._disk.get(path)
        data = None
        try:
            if entry is None:  # to be read anyway: its stamp from the open file (one stat, not two)
                stamp, data = _read(path)
            elif entry[0] is not None and (path in self._checked_now or self.trust_events and path in self._checked):
                stamp = entry[0]
            else:
                stat = os.stat(path)
                stamp = (stat.st_mtime_ns, stat.st_size)
        except OSError:
            return None
        self._checked.add(path)
        self._checked_now.add(path)
        known = entry[1] if entry is not None and entry[0] == stamp else None
        if isinstance(known, FileFacts):
            return known
        if known is not None and word is not None and word in known.absent:
            self._incomplete = True  # left unscanned by an earlier process: `complete_some` scans it
            return None
        if data is None:
            try:
                data = _read(path)[1]
            except OSError:
                return None
        if entry is not None and known is None:  # the file changed: what it said before may be gone
            self._answers_changed()
        self._cache_dirty = True
        if word is not None and not imports_mention(data, word.encode("utf-8", "surrogatepass")):
            self._disk[path] = (stamp, self._unscanned((*known.absent, word) if known is not None else (word,)))
            self._incomplete = True
            if entry is None:
                self._answers_changed()  # a file not known before: it may be anything for other questions
            return None
        facts = scan(data)
        if known is None:  # a file read for the first time, or changed (not one scanned at last)
            self._changed(path, facts, entry[1] if entry else None)
        self._disk[path] = (stamp, facts)
        return facts

    def _unscanned(self, words: tuple) -> Unscanned:
        """The one `Unscanned` of these words (thousands of files share a few)."""
        key = tuple(sorted({str(word) for word in words}))
        found = self._absent_sets.get(key)
        if found is None:
            found = self._absent_sets[key] = Unscanned(frozenset(key))
        return found

    def _answers_changed(self) -> None:
        """A file's facts changed: the whole-workspace answers may be other ones, and so may what the
        analyses read from them (`reads.INDEX`)."""
        self._answers.clear()
        self._scanned_now.clear()
        reads.forget(self._read_key)

    def new_analysis(self) -> None:
        """An analysis starts: files on disk are compared with their stamps again, once each."""
        self._checked_now.clear()
        self._scanned_now.clear()

    def forget(self, path: str) -> None:
        """A file changed, appeared or went away on disk (a file event): read it again when asked."""
        path = os.path.abspath(path)
        self._everything = None
        self._scanned_now.clear()
        self._forgotten.add(path)
        if self._disk.pop(path, None) is not None:
            self._answers_changed()
            self._cache_dirty = True

    def text_set(self, path: str) -> None:
        """A file's unsaved text was set or dropped: its entry is brought up to date now, so the
        next question need not look at every file again, and what was read from the old answers
        is forgotten before the next analysis, not amid it (`reads`: answers found again in
        another order than a whole analysis's)."""
        self._scanned_now.clear()
        facts = self.facts(path) if self._loaded or self._everything is not None else None
        if self._everything is not None:
            if facts is None:
                self._everything.pop(path, None)
            else:
                self._everything[path] = facts

    def _changed(self, path: str, new: FileFacts, old: FileFacts | Unscanned | None) -> None:
        # The memo answers from workspace files only: a file outside it (a `check` of installed
        # code, read once per file) cleared it at every first read, and the answers were made again.
        if new != old and self.project.is_workspace_file(path):
            self._answers_changed()

    def complete_some(self, limit: int = 256) -> bool:
        """Scan up to `limit` workspace files whose facts are not known yet (work left by `importers`,
        for a server's idle time); True when every file's facts are known, or no question met an
        unscanned one (then nothing is walked or read: a folder whose files nobody asked about costs nothing)."""
        if not self._incomplete:
            return True
        scanned = 0
        for path in self.project.workspace_files():
            entry = self._disk.get(path)
            if path in self.project.overlay or (entry is not None and isinstance(entry[1], FileFacts)):
                continue
            if scanned == limit:
                return False
            self.facts(path)
            scanned += 1
        self._incomplete = False
        if self.trust_events and self._everything is None:
            self._all()  # kept between questions from now on
        return True

    # ---- questions ----------------------------------------------------------------------------

    def _all(self) -> dict[str, FileFacts]:
        """Every workspace file's facts. Trusting file events, this is kept between questions (kept up
        to date by `forget` and `text_set`); otherwise every file's stamp is compared each time."""
        if self.trust_events and self._everything is not None:
            return self._everything
        result = self._scanned(None)
        self._everything = result if self.trust_events else None
        return result

    def _naming(self, word: str) -> dict[str, FileFacts]:
        """The facts of every workspace file that may import a module whose last name is `word`
        (an import statement of it contains the word); the others are not scanned (see the module
        docstring)."""
        if self.trust_events and self._everything is not None:
            return self._everything
        if word not in self._prefiltered and len(self._prefiltered) >= PREFILTERED_MODULES:
            # Many modules asked about (a check of many files, several open files): reading every
            # unscanned file again per module would soon cost more than scanning them all once.
            return self._all()
        self._prefiltered.add(word)
        return self._scanned(word)

    def _scanned(self, word: str | None) -> dict[str, FileFacts]:
        """Every workspace file's facts (`_facts` with `word`: those of the files it does not skip)."""
        changes = self.project._change_count
        known = self._scanned_now.get(word)
        if known is not None and known[0] == changes:
            return known[1]
        result = {}
        for path in self.project.workspace_files():
            facts = self._facts(path, word)
            if facts is not None:
                result[path] = facts
        self._scanned_now[word] = (changes, result)
        return result

    def importers(self, path: str, module_name: str | None) -> list[str]:
        """Workspace files whose import statements name the module at `path`, in path order."""
        reads.note(self._read_key)
        if not module_name:
            return []
        last = module_name.rsplit(".", 1)[-1]
        candidates = self._naming(last)
        key = ("importers", path, module_name)
        if key in self._answers:
            return self._answers[key]
        started = time.perf_counter()
        found, naming = [], 0
        folders: dict = {}  # folder -> (its package, its import roots): most importers share a few folders
        resolved: dict = {}  # (roots, absolute name) -> the file it names
        for other, named in self._imports_named(candidates, last):
            naming += bool(named) and other != path
            if other != path and any(self._names_module(other, name, path, folders, resolved) for name in named):
                found.append(other)
        found.sort()
        self._answers[key] = found
        log.debug("importers of %s: %d of the %d files whose imports name a '%s' import this one (only those "
                  "are modelled), %.1f ms", module_name, len(found), naming, last,
                  (time.perf_counter() - started) * 1000)
        return found

    def _imports_named(self, candidates: dict[str, FileFacts], last: str):
        """(file, its imports whose last name is `last`) of the `candidates`. Of every workspace file
        (a check): from a map made once, kept with the answers, by last name (a check asks this of
        each module it models; going over every file's imports each time was a tenth of a check of
        600 files)."""
        if candidates is not self._everything:
            for other, facts in candidates.items():
                yield other, [name for name in facts.imports if name.rsplit(".", 1)[-1] == last]
            return
        by_last = self._answers.get("imports-by-last")
        if by_last is None:
            by_last = self._answers["imports-by-last"] = {}
            for other, facts in candidates.items():
                for name in facts.imports:
                    by_last.setdefault(name.rsplit(".", 1)[-1], {}).setdefault(other, []).append(name)
        yield from by_last.get(last, {}).items()

    def _names_module(self, importer: str, name: str, path: str, folders: dict, resolved: dict) -> bool:
        """True when `name`, imported by `importer`, is the module at `path`: the name is resolved
        first (a relative one by the importer's package), so a vendored package's `from . import
        core` is its own `core`, never a top-level `core.py`. `folders` and `resolved` are memos of
        one question."""
        folder = os.path.dirname(importer)
        known = folders.get(folder)
        if known is None:
            known = folders[folder] = (self._package(importer), tuple(self.project.import_roots(importer)))
        package, roots = known
        if name.startswith(".") and package is None:
            return False  # outside any package Python refuses it ("no known parent package")
        name = absolute(name, package)
        if name is None:
            return False
        key = (roots, name)
        if key not in resolved:
            found = self.project.find_module(name, list(roots))
            resolved[key] = os.path.abspath(found) if found is not None else None
        if resolved[key] is not None:
            return resolved[key] == path
        return _names_file(name, path)

    def _package(self, path: str) -> str | None:
        return self.project.module_name(os.path.join(os.path.dirname(path), "__init__.py"))

    def can_matter(self, path: str, text: str | None = None) -> bool:
        """False when the file (its `text` if given) cannot have findings: it never mentions Pallas or
        `get_global`, and imports no workspace module that does (or that imports one that does, ...)."""
        reads.note(self.project.read_key(path))
        reads.note(self._read_key)
        if text is not None and ("pallas" in text or "get_global" in text):
            return True
        if text is None or self.project.overlay.get(path) == text:
            facts = self.facts(path)
        else:
            facts = scan(text.encode("utf-8", "surrogatepass"))
        if facts is None or facts.mentions_pallas:
            return True
        if not facts.imports:
            return False
        relevant = self._relevant_modules()
        package = self._package(path)
        for name in facts.imports:
            name = absolute(name, package)
            if name is not None and _matches_any(name, relevant):
                return True
        return False

    def mentions_interpret(self, path: str) -> bool:
        reads.note(self.project.read_key(path))
        facts = self.facts(path)
        return facts is not None and facts.mentions_interpret

    def _relevant_modules(self) -> dict[str, set[str]]:
        """Module names of the workspace files that can matter, by last component."""
        if "relevant" in self._answers:
            return self._answers["relevant"]
        everything = self._all()
        relevant: dict[str, set[str]] = {}
        by_last: dict[str, list[tuple[str, str]]] = {}  # last component of an import -> (file, absolute name)
        pending = []
        for path, facts in everything.items():
            if facts.mentions_pallas:
                pending.append(path)
                continue
            package = None
            for name in facts.imports:
                if name.startswith("."):
                    package = package if package is not None else (self._package(path) or "")
                    name = absolute(name, package)
                    if name is None:
                        continue
                by_last.setdefault(name.rsplit(".", 1)[-1], []).append((path, name))
        done = set(pending)
        while pending:
            path = pending.pop()
            module = self.project.module_name(path)
            if not module:
                continue
            relevant.setdefault(module.rsplit(".", 1)[-1], set()).add(module)
            for importer, name in by_last.get(module.rsplit(".", 1)[-1], ()):
                if importer not in done and _matches(name, module):
                    done.add(importer)
                    pending.append(importer)
        self._answers["relevant"] = relevant
        return relevant

    # ---- the cache file ------------------------------------------------------------------------

    def _load(self) -> None:
        """Entries of files on disk from the last run (each still checked against its file's stamp)."""
        self._loaded = True
        for path, (stamp, facts) in self._stored().items():
            self._disk.setdefault(path, (stamp, facts))

    def _stored(self) -> dict[str, tuple[tuple[int, int], FileFacts | Unscanned]]:
        data = disk_cache.read("imports", self.project.root)
        entries = {}
        for path, entry in data.items() if isinstance(data, dict) else ():
            try:
                if len(entry) == 3:  # [mtime, size, words none of the file's imports contains]
                    mtime, size, absent = entry
                    entries[path] = ((mtime, size), self._unscanned(tuple(absent)))
                else:
                    mtime, size, pallas, interpret, imports = entry
                    entries[path] = ((mtime, size), FileFacts(tuple(imports), bool(pallas), bool(interpret)))
            except (TypeError, ValueError):
                continue
        return entries

    def save(self) -> None:
        """Write the entries of files on disk to the cache file, when some changed: merged with what
        another process wrote meanwhile (a file it scanned and this one did not is taken from it)."""
        if not self._cache_dirty:
            return
        self._cache_dirty = False
        for path, (stamp, facts) in self._stored().items():
            if path in self._forgotten:
                continue
            mine = self._disk.get(path)
            if mine is None or (isinstance(mine[1], Unscanned) and isinstance(facts, FileFacts) and mine[0] == stamp):
                self._disk[path] = (stamp, facts)  # scanned by another process: as good as our own
        disk_cache.write("imports", {path: [*stamp, list(facts.absent)] if isinstance(facts, Unscanned)
                                     else [*stamp, facts.mentions_pallas, facts.mentions_interpret, facts.imports]
                                     for path, (stamp, facts) in self._disk.items() if stamp is not None},
                         self.project.root)


def _names_file(name: str, path: str) -> bool:
    """An absolute `name` found in none of the importer's folders (a `src/` layout, a namespace
    package) may still be the file at `path`, but only when the file sits at that dotted path:
    `ns.core` may be `.../ns/core.py`, never a top-level `core.py`."""
    stem = os.path.dirname(path) if os.path.basename(path) == "__init__.py" else os.path.splitext(path)[0]
    return stem.endswith(os.sep + name.replace(".", os.sep))


def _matches(name: str, module: str) -> bool:
    """`name` (absolute, as imported) may be `module` (as named from its package root)."""
    return name == module or name.endswith("." + module) or module.endswith("." + name)


def _matches_any(name: str, relevant: dict[str, set[str]]) -> bool:
    return any(_matches(name, module) for module in relevant.get(name.rsplit(".", 1)[-1], ()))
