"""Settings from `[tool.pallas-lsp]` in pyproject.toml: `select`, `ignore`, `python`.

Precedence: command-line flags (or editor settings) over pyproject.toml over defaults.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib


class ConfigError(Exception):
    pass


@dataclass
class Settings:
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    python: str | None = None
    root: str | None = None  # folder of the pyproject.toml the settings came from
    source: str | None = None


def find_pyproject(start: str) -> Path | None:
    folder = Path(start).resolve()
    if not folder.is_dir():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        path = candidate / "pyproject.toml"
        if path.is_file():
            return path
    return None


def _codes(value, key: str, path: Path) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: [tool.pallas-lsp] {key} must be a list of rule codes")
    return [v.strip().upper() for v in value if v.strip()]


def load_settings(start: str) -> Settings:
    """Settings from the nearest pyproject.toml above `start` (defaults if there is none)."""
    path = find_pyproject(start)
    if path is None:
        return Settings()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read settings: {exc}") from exc
    table = data.get("tool", {}).get("pallas-lsp", {})
    settings = Settings(root=str(path.parent), source=str(path))
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.pallas-lsp] must be a table")
    if "select" in table:
        settings.select = _codes(table["select"], "select", path)
    if "ignore" in table:
        settings.ignore = _codes(table["ignore"], "ignore", path)
    if "python" in table:
        if not isinstance(table["python"], str):
            raise ConfigError(f"{path}: [tool.pallas-lsp] python must be a path")
        settings.python = os.path.normpath(os.path.join(path.parent, os.path.expanduser(table["python"])))
    return settings


def split_codes(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [c.strip().upper() for c in text.split(",") if c.strip()]
