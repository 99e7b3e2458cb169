"""Which paths are not the project's own code: never read as workspace modules, never checked when a
folder is walked (a file named explicitly is still checked), as in ruff.

Left out: `.gitignore`d paths (every `.gitignore` from the git repository's top down, and
`.git/info/exclude`), hidden folders (`.git`, `.venv`, ...), virtual environments (any folder with a
`pyvenv.cfg`), and the folders in `DEFAULT_EXCLUDE` (`node_modules`, `build`, `dist`,
`site-packages`, ...). `[tool.pallas-lsp] exclude` replaces `DEFAULT_EXCLUDE`; `extend-exclude` adds
to it. A pattern without `/` matches a file or folder of that name anywhere; one with `/` is a path
from the pyproject.toml's folder; both take `*`, `?`, `[...]` and `**`, as in `.gitignore`, matched in
linear time by `globs.py` (a repository writes these patterns: a backtracking regex let one hang us).
"""

from __future__ import annotations

import logging
import os

from ..private_files import warn_once
from ..source_text import MAX_FILE_BYTES, Unanalysable, read_whole_file
from .globs import GlobSet, glob, is_glob

log = logging.getLogger(__name__)

DEFAULT_EXCLUDE = ("__pycache__", "__pypackages__", "_build", "buck-out", "build", "dist", "env", "venv",
                   "node_modules", "site-packages", "dist-packages")


class Rule:
    """One pattern: matches a path relative to `base` (a `.gitignore`'s folder, or the settings root)."""

    __slots__ = ("base", "pattern", "glob", "negated", "directories_only", "anchored")

    def __init__(self, base: str, pattern: str):
        self.negated = pattern.startswith("!")
        pattern = pattern[1:] if self.negated else pattern
        self.directories_only = pattern.endswith("/")
        pattern = pattern.rstrip("/")
        self.anchored = "/" in pattern
        self.base = base
        self.pattern = pattern
        self.glob = glob(pattern)

    def matches(self, path: str, is_dir: bool) -> bool:
        """Does the rule match `path` (absolute)? An unanchored rule also matches names outside `base`."""
        if self.directories_only and not is_dir:
            return False
        if path.startswith(self.base + os.sep):
            return self.glob.matches(_slashed(path[len(self.base) + 1:]))
        return not self.anchored and self.glob.matches(os.path.basename(path))


def _read_rules(base: str, path: str) -> list[Rule]:
    """The patterns of a `.gitignore` (none, said once, when it is not a regular file: a FIFO hung the walk)."""
    try:
        lines = read_whole_file(path, MAX_FILE_BYTES, "ignore files").decode("utf-8", errors="replace").splitlines()
    except Unanalysable as exc:
        warn_once(f"{path}: not read: {exc.reason}; its patterns do not apply", log)
        return []
    except OSError:
        return []
    rules = []
    for line in lines:
        if line.endswith(" ") and not line.endswith("\\ "):
            line = line.rstrip(" ")
        if line and not line.startswith("#"):
            rules.append(Rule(base, line[1:] if line.startswith("\\") else line))
    return rules


def _git_top(folder: str) -> str | None:
    current = os.path.abspath(folder)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


class Exclusions:
    """What a walk of `root` leaves out (see the module docstring); `settings_root` anchors the
    configured patterns."""

    def __init__(self, root: str, exclude: list[str] | None = None, extend_exclude: list[str] | None = None,
                 settings_root: str | None = None, per_file_ignores: dict[str, list[str]] | None = None):
        self._arguments = (root, exclude, extend_exclude, settings_root, per_file_ignores)
        # Read from the same table, carried here to the check workers (the engine applies them).
        self.per_file_ignores = dict(per_file_ignores or {})
        self.root = os.path.abspath(root)
        base = os.path.abspath(settings_root or root)
        patterns = list(DEFAULT_EXCLUDE if exclude is None else exclude) + list(extend_exclude or [])
        self.names = {p for p in patterns if not is_glob(p)}  # the common case, fast
        self.configured = [Rule(base, p) for p in patterns if p not in self.names]
        self.git_top = _git_top(self.root)
        self._ignores: dict[str, list[Rule]] = {}
        self._chains: dict[str, _Chain] = {}  # by folder
        self._chains_by_rules: dict[tuple[int, ...], _Chain] = {}
        self._rule_lists_by_folder: dict[str, tuple[list[Rule], ...]] = {}

    @classmethod
    def for_folder(cls, folder: str, loaded_settings: dict | None = None) -> "Exclusions":
        """The exclusions `[tool.pallas-lsp]` of the nearest pyproject.toml sets (defaults without one);
        `loaded_settings` as `config.load_settings` takes it."""
        from ..config import ConfigError, load_settings

        try:
            settings = load_settings(folder, loaded_settings)
        except ConfigError:
            return cls(folder)
        return cls(folder, settings.exclude, settings.extend_exclude, settings.root, settings.per_file_ignores)

    @property
    def arguments(self) -> tuple:
        """What makes the same exclusions again in another process (`Exclusions(*arguments)`)."""
        return self._arguments

    def _gitignore(self, folder: str) -> list[Rule]:
        rules = self._ignores.get(folder)
        if rules is None:
            rules = _read_rules(folder, os.path.join(folder, ".gitignore"))
            if folder == self.git_top:
                rules = _read_rules(folder, os.path.join(folder, ".git", "info", "exclude")) + rules
            self._ignores[folder] = rules
        return rules

    def _ignore_chain(self, folder: str) -> "_Chain":
        """Rules of every `.gitignore` from the repository's top down to `folder` (outermost first)."""
        if self.git_top is None or not (folder == self.git_top or folder.startswith(self.git_top + os.sep)):
            return _Chain([])
        found = self._chains.get(folder)
        if found is None:
            # Folders whose chains hold the same `.gitignore` files share one (most folders have none).
            rule_lists = self._rule_lists(folder)
            key = tuple(map(id, rule_lists))  # the lists live in `_ignores` as long as this does
            found = self._chains_by_rules.get(key)
            if found is None:
                found = self._chains_by_rules[key] = _Chain([rule for rules in rule_lists for rule in rules])
            self._chains[folder] = found
        return found

    def _rule_lists(self, folder: str) -> tuple[list[Rule], ...]:
        """The non-empty `.gitignore` rule lists from the repository's top down to `folder` (a
        folder's are its parent's plus its own)."""
        found = self._rule_lists_by_folder.get(folder)
        if found is None:
            parent = () if folder == self.git_top else self._rule_lists(os.path.dirname(folder))
            own = self._gitignore(folder)
            found = self._rule_lists_by_folder[folder] = (*parent, own) if own else parent
        return found

    def excludes(self, path: str, is_dir: bool, parent_rules: "_Chain | None" = None) -> bool:
        """True when this one file or folder is left out (its parent folders are not looked at)."""
        path = os.path.abspath(path)
        name = os.path.basename(path)
        if name in self.names:
            return True
        if is_dir and (name.startswith(".") or os.path.isfile(os.path.join(path, "pyvenv.cfg"))):
            return True
        chain = parent_rules if parent_rules is not None else self._ignore_chain(os.path.dirname(path))
        return self._excluded_by_rules(path, chain, is_dir)

    def excluded(self, path: str) -> bool:
        """True when the path, or a folder above it below the root, is left out."""
        path = os.path.abspath(path)
        if not path.startswith(self.root + os.sep):
            return self.excludes(path, os.path.isdir(path))
        parts = os.path.relpath(path, self.root).split(os.sep)
        current = self.root
        for index, part in enumerate(parts):
            current = os.path.join(current, part)
            if self.excludes(current, index < len(parts) - 1 or os.path.isdir(current)):
                return True
        return False

    def walk(self, folder: str):
        """`*.py` files under `folder` that are not left out, in a stable order (`folder` itself is
        walked even when it would be left out: it was asked for)."""
        for path, _ in self.walk_entries(folder):
            yield path

    def walk_entries(self, folder: str, suffixes: tuple[str, ...] = (".py",)):
        """(path, `os.DirEntry`) of each file `walk` gives: the entry says whether it is a regular
        file without another `stat` (from the folder listing's file types).

        Each folder's files (by name), then its folders (by name), depth first, as `os.walk` gives
        them; what is left out is decided per folder where it can be: a listing without
        `.gitignore` has no rules to read, and one with `pyvenv.cfg` is an environment (not walked)."""
        pending = [(folder, os.path.abspath(folder), True)]
        while pending:
            folder, absolute, asked = pending.pop()
            try:
                with os.scandir(folder) as listing:
                    entries = sorted(listing, key=lambda entry: entry.name)
            except OSError:
                continue
            if not asked and any(entry.name == "pyvenv.cfg" and _is_file(entry) for entry in entries):
                continue  # a virtual environment
            if absolute != self.git_top and not any(entry.name == ".gitignore" for entry in entries):
                self._ignores.setdefault(absolute, [])
            rules = self._ignore_chain(absolute)
            by_name = not self.configured and not rules.rules  # only the plain names can leave a file out
            folder_prefix, absolute_prefix = os.path.join(folder, ""), os.path.join(absolute, "")
            inner = []
            for entry in entries:
                name = entry.name
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                if is_dir:
                    if not (entry.is_symlink()  # not followed: a loop of them cannot make the walk endless
                            or name in self.names or name.startswith(".")
                            or self._excluded_by_rules(absolute_prefix + name, rules, True)):
                        inner.append((folder_prefix + name, absolute_prefix + name, False))
                elif name.endswith(suffixes) and name not in self.names and (
                        by_name or not self._excluded_by_rules(absolute_prefix + name, rules, False)):
                    yield folder_prefix + name, entry
            pending.extend(reversed(inner))

    def _excluded_by_rules(self, path: str, rules: "_Chain", is_dir: bool) -> bool:
        """What `excludes` decides from the rules (`[tool.pallas-lsp]` patterns, then `.gitignore`
        files), the checks `walk_entries` makes from the listings (plain names, hidden folders,
        environments) aside."""
        for rule in self.configured:
            if rule.matches(path, is_dir):
                return not rule.negated
        return rules.ignores(path, is_dir)


def _slashed(path: str) -> str:
    return path if os.sep == "/" else path.replace(os.sep, "/")


def _is_file(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


class _Chain:
    """The `.gitignore` rules that apply in one folder: the last rule that matches decides (a `!`
    rule takes a path back). The rules of each `.gitignore` folder are matched at once, by one
    `GlobSet` (a walk asks once per file)."""

    def __init__(self, rules: list[Rule]):
        self.rules = rules
        by_base: dict[str, list[int]] = {}
        for index, rule in enumerate(rules):
            by_base.setdefault(rule.base, []).append(index)
        self.groups = [(base + os.sep, GlobSet([rules[i].pattern for i in indices]), indices)
                       for base, indices in by_base.items()]

    def ignores(self, path: str, is_dir: bool) -> bool:
        deciding = -1
        for prefix, globs, indices in self.groups:
            if path.startswith(prefix):
                for matched in globs.matching(_slashed(path[len(prefix):])):
                    index = indices[matched]
                    if index > deciding and (is_dir or not self.rules[index].directories_only):
                        deciding = index
        return deciding >= 0 and not self.rules[deciding].negated
