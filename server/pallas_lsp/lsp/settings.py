"""Editor settings and workspace folders: what the server reads from the client and how it
combines them with `[tool.pallas-lsp]` in pyproject.toml. No LSP types."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, replace

from ..analysis import Project
from ..checked_values import Number, shown, web_address
from ..config import Settings as FileSettings

LOG_LEVELS = ("error", "warning", "info", "debug")
TRACE_ENTRY_POINTS = ("off", "onSave")  # `traceEntryPoints`: run the project's own entry points after a save
PLATFORMS = ("gpu", "tpu")


@dataclass
class Settings:
    """Editor settings (initializationOptions, or `workspace/configuration` section `pallas`).

    `None` means "not set here": pyproject.toml `[tool.pallas-lsp]` then applies (see `effective`).
    """

    python: str | None = None
    platform: str | None = None  # "gpu" | "tpu"; what a bare pl.pallas_call is lowered for
    select: list[str] | None = None
    ignore: list[str] | None = None
    debounce_ms: int = 150
    log_level: str = "info"
    trace_timeout: float = 120.0
    inlay_hints: bool = True  # `inlayHints`: kernel parameter types after each parameter
    show_trace_results: bool = True  # `showTraceResults`: a message with each trace's outcome
    docs_url: str | None = None  # `docsUrl`: where rule pages are linked (default: the packaged pages)
    # `traceEntryPoints`: "onSave" runs the project's tests and __main__ blocks (repository code: the
    # user's consent, as trusting the workspace) after a save, JAX lowering each kernel they launch
    trace_entry_points: str = "off"

    @classmethod
    def from_options(cls, options, base: "Settings | None" = None, problems: list[str] | None = None) -> "Settings":
        """Settings from a JSON object; keys it does not set keep `base`'s values. A value that does
        not fit is clamped or left at `base`'s, and `problems` gets a message saying which and why."""
        settings = replace(base) if base is not None else cls()
        problems = [] if problems is None else problems
        if isinstance(options, dict) and "pallas" in options:
            options = options["pallas"]
            if not isinstance(options, dict) and options is not None:
                problems.append(f"setting pallas = {shown(options)} is not an object of settings: it is ignored")
                return settings
        if options is None:
            return settings
        if not isinstance(options, dict):
            problems.append(f"settings {shown(options)} are not an object of settings: they are ignored")
            return settings
        for key, value in options.items():
            if key in _READERS:
                if value is not None:
                    _READERS[key](settings, value, f"setting pallas.{key} = {shown(value)}", problems)
            elif key not in KNOWN_KEYS:  # other keys may be another tool's: only a near miss is a typo
                close = difflib.get_close_matches(str(key), sorted(KNOWN_KEYS), 1, 0.75)
                if close:
                    problems.append(f"unknown setting pallas.{shown(str(key))[1:-1]} (did you mean {close[0]}?): "
                                    "it is ignored")
        return settings


def _python(settings: Settings, value, subject: str, problems: list[str]) -> None:
    if isinstance(value, str) and "\0" not in value:
        settings.python = value or None
    else:
        problems.append(f"{subject} is not a path to a Python interpreter: using "
                        f"{shown(settings.python) if settings.python else 'the default'}")


def _platform(settings: Settings, value, subject: str, problems: list[str]) -> None:
    if value in PLATFORMS or value == "":
        settings.platform = value or None
    else:
        instead = shown(settings.platform) if settings.platform else '[tool.pallas-lsp] platform, else "gpu"'
        problems.append(f"{subject} is not one of {', '.join(map(shown, PLATFORMS))}: using {instead}")


def _codes(key: str):
    def read(settings: Settings, value, subject: str, problems: list[str]) -> None:
        if isinstance(value, list) and all(isinstance(code, str) for code in value):
            setattr(settings, key, list(value))
            return
        previous = getattr(settings, key)
        instead = shown(previous) if previous is not None else f"[tool.pallas-lsp] {key}, else the default"
        problems.append(f"{subject} is not a list of rule codes (strings): using {instead}")
    return read


def _number(attribute: str, number: Number):
    def read(settings: Settings, value, subject: str, problems: list[str]) -> None:
        setattr(settings, attribute, number.check(value, subject, getattr(settings, attribute), problems))
    return read


def _flag(attribute: str):
    def read(settings: Settings, value, subject: str, problems: list[str]) -> None:
        if isinstance(value, bool):
            setattr(settings, attribute, value)
        else:
            problems.append(f"{subject} is not true or false: using {shown(getattr(settings, attribute))}")
    return read


def _log_level(settings: Settings, value, subject: str, problems: list[str]) -> None:
    if value in LOG_LEVELS:
        settings.log_level = value
    else:
        problems.append(f"{subject} is not one of {', '.join(map(shown, LOG_LEVELS))}: using {shown(settings.log_level)}")


def _trace_entry_points(settings: Settings, value, subject: str, problems: list[str]) -> None:
    if value in TRACE_ENTRY_POINTS:
        settings.trace_entry_points = value
    else:
        problems.append(f"{subject} is not one of {', '.join(map(shown, TRACE_ENTRY_POINTS))}: "
                        f"using {shown(settings.trace_entry_points)}")


def _docs_url(settings: Settings, value, subject: str, problems: list[str]) -> None:
    why = web_address(value.strip()) if isinstance(value, str) and value.strip() else None
    if isinstance(value, str) and why is None:
        settings.docs_url = value.strip() or None
        return
    problems.append(f"{subject} {why or 'is not an address (a string)'}: the rule links go to "
                    f"{settings.docs_url or 'the pages shipped with pallas-lsp'}")


DEBOUNCE = Number("a number of milliseconds", "ms", minimum=0, maximum=60_000, integer=True)
TRACE_TIMEOUT = Number("a number of seconds", "s", minimum=0, maximum=86_400.0, positive=True)
_READERS = {
    "python": _python, "platform": _platform, "select": _codes("select"), "ignore": _codes("ignore"),
    "debounceMs": _number("debounce_ms", DEBOUNCE), "logLevel": _log_level,
    "showTraceResults": _flag("show_trace_results"), "inlayHints": _flag("inlay_hints"),
    "docsUrl": _docs_url, "traceTimeout": _number("trace_timeout", TRACE_TIMEOUT),
    "traceEntryPoints": _trace_entry_points,
}
# Also sent by clients, read elsewhere or not at all: `token` (serve --tcp), `tracePlatform` (the
# VS Code extension's, which it passes with each trace itself).
KNOWN_KEYS = frozenset(_READERS) | {"token", "tracePlatform"}


def effective(editor: Settings, pyproject: FileSettings) -> Settings:
    """Editor settings win over `[tool.pallas-lsp]` in pyproject.toml, which wins over defaults."""
    merged = replace(editor)
    if merged.python is None:
        merged.python = pyproject.python
    if merged.platform is None:
        merged.platform = pyproject.platform
    if merged.select is None:
        merged.select = pyproject.select
    if merged.ignore is None:
        merged.ignore = pyproject.ignore
    return merged


@dataclass(eq=False)
class Folder:
    """A workspace folder: its own settings and its own analysed project (multi-root workspaces)."""

    root: str
    uri: str | None
    editor: Settings
    settings: Settings
    project: Project

    def contains(self, path: str) -> bool:
        return path == self.root or path.startswith(self.root.rstrip(os.sep) + os.sep)
