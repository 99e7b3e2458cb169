"""Settings from `[tool.pallas-lsp]` in pyproject.toml: `select`, `ignore`, `per-file-ignores`, `python`,
`platform`, `exclude`, `extend-exclude`.

Precedence: command-line flags (or editor settings) over pyproject.toml over defaults.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .interpreters import refusal_of_project_choice
from .private_files import warn_once
from .source_text import Unanalysable, read_whole_file

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib


log = logging.getLogger(__name__)


class ConfigError(Exception):
    pass


PLATFORMS = ("gpu", "tpu")


@dataclass
class Settings:
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    # Glob pattern (as `exclude` takes them, from the pyproject.toml's folder) -> codes or prefixes, as ruff.
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    python: str | None = None
    platform: str | None = None  # "gpu" | "tpu": what a bare pl.pallas_call is lowered for (default gpu)
    exclude: list[str] | None = None  # replaces analysis.exclusions.DEFAULT_EXCLUDE
    extend_exclude: list[str] = field(default_factory=list)
    root: str | None = None  # folder of the pyproject.toml the settings came from
    source: str | None = None
    has_table: bool = False  # the pyproject.toml has a [tool.pallas-lsp] table (`check -v` says so)
    # A `python` the repository chose but that is not run (see interpreters.refusal_of_project_choice):
    # (the path, why); callers tell the user, unless the user's own flag or setting names an interpreter.
    python_refused: tuple[str, str] | None = None

    def refusal_message(self) -> str | None:
        if self.python_refused is None:
            return None
        python, reason = self.python_refused
        return (f"{self.source}: [tool.pallas-lsp] python = {python!r} is not used: {reason}. A repository "
                "may only choose a Python of its own virtual environment; pass it with --python (or the "
                "editor's `python` setting) to use it anyway")


# Real ones are a few kB; TOML is parsed in Python (a crafted 5 MB file took 4 s).
MAX_SETTINGS_BYTES = 1_000_000


def find_pyproject(start: str) -> Path | None:
    """The nearest pyproject.toml above `start`: anything of that name but a folder (a FIFO in its place
    is the project's settings file, refused when read, not a reason to take a parent folder's)."""
    folder = Path(start).resolve()
    if not folder.is_dir():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        path = candidate / "pyproject.toml"
        if path.exists() and not path.is_dir():
            return path
    return None


def read_pyproject(path: Path) -> dict | None:
    """The TOML of a pyproject.toml; None, said once, when it is not a file to read settings from (a
    FIFO, /proc/kmsg: they never end; over MAX_SETTINGS_BYTES). ConfigError when it is unreadable or
    not TOML Python can read (an integer over its digit limit, nesting past its recursion limit)."""
    try:
        data = read_whole_file(str(path), MAX_SETTINGS_BYTES, "settings files")
    except Unanalysable as exc:
        warn_once(f"{path}: not read: {exc.reason}; the default settings apply", log)
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read settings: {exc}") from exc
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:  # ValueError: TOMLDecodeError, a 5,000-digit integer
        raise ConfigError(f"{path}: cannot read settings: {exc}") from exc
    except RecursionError:
        raise ConfigError(f"{path}: cannot read settings: nested too deeply") from None


KNOWN_KEYS = ("select", "ignore", "per-file-ignores", "python", "platform", "exclude", "extend-exclude")


def _codes(value, key: str, path: Path) -> list[str]:
    """The rule codes or prefixes of `select` or `ignore`; whether they name rules is the engine's
    to say (`engine.load_settings`: settings are read below the rules, for the exclusions too)."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: [tool.pallas-lsp] {key} must be a list of rule codes")
    return [v.strip().upper() for v in value if v.strip()]


def load_settings(start: str, loaded: dict[Path, Settings] | None = None) -> Settings:
    """Settings from the nearest pyproject.toml above `start` (defaults if there is none).

    `loaded` (by pyproject path) lets one `check` run read each file once: a `python` setting costs
    git calls (`refusal_of_project_choice`), and every folder walk wants the exclusions again."""
    path = find_pyproject(start)
    if path is None:
        return Settings()
    if loaded is not None:
        if path not in loaded:
            loaded[path] = load_settings(str(path.parent))
        return loaded[path]
    data = read_pyproject(path)
    if data is None:
        return Settings(root=str(path.parent), source=str(path))
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: [tool] must be a table, not {type(tool).__name__} {tool!r}")
    table = tool.get("pallas-lsp", {})
    settings = Settings(root=str(path.parent), source=str(path), has_table="pallas-lsp" in tool)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.pallas-lsp] must be a table")
    unknown = [key for key in table if key not in KNOWN_KEYS]
    if unknown:
        raise ConfigError(f"{path}: [tool.pallas-lsp]: unknown key{'s' if len(unknown) > 1 else ''} "
                          f"{', '.join(map(repr, unknown))} (known: {', '.join(KNOWN_KEYS)})")
    if "select" in table:
        settings.select = _codes(table["select"], "select", path)
    if "ignore" in table:
        settings.ignore = _codes(table["ignore"], "ignore", path)
    if "per-file-ignores" in table:
        patterns = table["per-file-ignores"]
        if not isinstance(patterns, dict):
            raise ConfigError(f'{path}: [tool.pallas-lsp] per-file-ignores must be a table of glob patterns and rule '
                              'codes ("tests/*.py" = ["PAL001"])')
        settings.per_file_ignores = {pattern: _codes(codes, f"per-file-ignores {pattern!r}", path)
                                     for pattern, codes in patterns.items()}
    for key in ("exclude", "extend-exclude"):
        if key in table:
            value = table[key]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{path}: [tool.pallas-lsp] {key} must be a list of paths or glob patterns")
            setattr(settings, key.replace("-", "_"), value)
    if "python" in table:
        if not isinstance(table["python"], str):
            raise ConfigError(f"{path}: [tool.pallas-lsp] python must be a path")
        chosen = os.path.normpath(os.path.join(path.parent, os.path.expanduser(table["python"])))
        refusal = refusal_of_project_choice(chosen, str(path.parent))
        if refusal is None:
            settings.python = chosen
        else:
            settings.python_refused = (table["python"], refusal)
    if "platform" in table:
        if table["platform"] not in PLATFORMS:
            raise ConfigError(f"{path}: [tool.pallas-lsp] platform must be one of {', '.join(map(repr, PLATFORMS))}")
        settings.platform = table["platform"]
    return settings


def split_codes(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [c.strip().upper() for c in text.split(",") if c.strip()]
