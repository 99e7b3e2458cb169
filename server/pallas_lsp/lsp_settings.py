"""Editor settings and workspace folders: what the server reads from the client and how it
combines them with `[tool.pallas-lsp]` in pyproject.toml. No LSP types."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from .analysis import Project
from .config import Settings as FileSettings

LOG_LEVELS = ("error", "warning", "info", "debug")


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

    @classmethod
    def from_options(cls, options, base: "Settings | None" = None) -> "Settings":
        """Settings from a JSON object; keys it does not set keep `base`'s values."""
        settings = replace(base) if base is not None else cls()
        if not isinstance(options, dict):
            return settings
        options = options.get("pallas", options)
        if not isinstance(options, dict):
            return settings
        if isinstance(options.get("python"), str):
            settings.python = options["python"] or None
        if options.get("platform") in ("gpu", "tpu"):
            settings.platform = options["platform"]
        for key in ("select", "ignore"):
            if isinstance(options.get(key), list):
                setattr(settings, key, [str(c) for c in options[key]])
        if isinstance(options.get("debounceMs"), int) and options["debounceMs"] >= 0:
            settings.debounce_ms = options["debounceMs"]
        if options.get("logLevel") in LOG_LEVELS:
            settings.log_level = options["logLevel"]
        if isinstance(options.get("showTraceResults"), bool):
            settings.show_trace_results = options["showTraceResults"]
        if isinstance(options.get("docsUrl"), str):
            settings.docs_url = options["docsUrl"].strip() or None
        if isinstance(options.get("inlayHints"), bool):
            settings.inlay_hints = options["inlayHints"]
        timeout = options.get("traceTimeout")
        if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0:
            settings.trace_timeout = float(timeout)
        return settings


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
