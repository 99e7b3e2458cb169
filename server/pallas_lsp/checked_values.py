"""Values users set outside the command line: editor settings (lsp/settings.py) and the
`PALLAS_LSP_*` environment variables. A bad one is never used as it is and never ignored without
a word: it is clamped into range or replaced by the default, and a message names the setting, the
value (shortened) and what is used instead. Stdlib only: the trace worker imports this too."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from urllib.parse import urlparse

_SHOWN_CHARACTERS = 40


def shown(value, depth: int = 0) -> str:
    """`value` as JSON-like text, short whatever it is (a 10**400, a 60 MB string, deep nesting)."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif value is None:
        text = "null"
    elif isinstance(value, int):
        digits = str(abs(value)) if value.bit_length() < 200 else None
        if digits is None or len(digits) > _SHOWN_CHARACTERS:
            exponent = int(value.bit_length() * math.log10(2))  # the number of digits, give or take one
            text = f"{'-' if value < 0 else ''}about 10**{exponent}"
        else:
            text = str(value)
    elif isinstance(value, float):
        text = repr(value)
    elif isinstance(value, str):  # quoted and escaped as JSON (a newline shows as \n), then cut
        text = json.dumps(value[:_SHOWN_CHARACTERS], ensure_ascii=False)
        if len(value) > _SHOWN_CHARACTERS:
            text = text[:-1] + f'…" ({len(value):,} characters)'
    elif isinstance(value, (list, tuple)):
        if depth >= 1 or not value:
            text = f"a list of {len(value)} item{'s' * (len(value) != 1)}" if value else "[]"
        else:
            items = [shown(item, depth + 1) for item in value[:3]]
            text = "[" + ", ".join(items) + (", …" if len(value) > 3 else "") + "]"
    elif isinstance(value, dict):
        if depth >= 1 or not value:
            text = f"an object of {len(value)} key{'s' * (len(value) != 1)}" if value else "{}"
        else:
            items = [f"{shown(str(key), depth + 1)}: {shown(item, depth + 1)}" for key, item in list(value.items())[:3]]
            text = "{" + ", ".join(items) + (", …" if len(value) > 3 else "") + "}"
    else:
        text = type(value).__name__
    return text


def _amount(value: float, unit: str) -> str:
    number = f"{value:,}" if isinstance(value, int) else f"{value:,g}"
    return f"{number} {unit}" if unit else number


@dataclass(frozen=True)
class Number:
    """A number from `minimum` to `maximum`, clamped to the nearest bound. Refused (the fallback is
    used): a negative number, 0 where it must be `positive` (a zero timeout is a typo, never a
    choice), a non-number, NaN, a boolean (JSON `true` is no count), a fraction where it is `integer`."""

    what: str  # "a number of seconds"
    unit: str
    minimum: float
    maximum: float
    integer: bool = False
    positive: bool = False

    def requirement(self) -> str:
        return f"{self.what}, {'above 0' if self.positive else '0 or more'}"

    def check(self, value, subject: str, fallback, problems: list[str]):
        """`value` made fit; `subject` is what the message calls it (`setting pallas.x = 5`)."""
        number = self._number(value)
        if number is None or number < 0 or (self.positive and number == 0):
            problems.append(f"{subject} is not {self.requirement()}: using {_amount(fallback, self.unit)}")
            return fallback
        if number > self.maximum:
            problems.append(f"{subject} is over the maximum of {_amount(self.maximum, self.unit)}: "
                            f"using {_amount(self.maximum, self.unit)}")
            return self.maximum
        if number < self.minimum:
            problems.append(f"{subject} is below the minimum of {_amount(self.minimum, self.unit)}: "
                            f"using {_amount(self.minimum, self.unit)}")
            return self.minimum
        return round(number) if self.integer else float(number)

    def _number(self, value):
        """The value as a comparable number (a huge int stays an int: float() of it overflows), or None."""
        if isinstance(value, str):
            text = value.strip()
            try:
                value = int(text)
            except ValueError:
                try:
                    value = float(text)
                except ValueError:
                    return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        if isinstance(value, float):
            if math.isnan(value):
                return None
            if self.integer and math.isfinite(value) and value != int(value):
                return None
        return value


def web_address(value: str) -> str | None:
    """Why `value` is no address rule pages can be linked at (None: it is one)."""
    parsed = urlparse(value)
    if parsed.scheme not in ("http", "https", "file"):
        return "is not an http, https or file address"
    if parsed.scheme != "file" and not parsed.netloc:
        return "has no host"
    return None


# ---- PALLAS_LSP_* environment variables -----------------------------------------------------------
# Each is read when the module that uses it is imported, through these functions; `environment_problems`
# checks all of them again for the start of `check`, `trace` and `serve`, which say what it found.

PROBE_TIMEOUT = Number("a number of seconds", "s", minimum=1.0, maximum=3600.0, positive=True)
PROBE_TIMEOUT_DEFAULT = 10.0
TRACE_MEMORY = Number("a whole number of MB", "MB", minimum=0, maximum=4 * 1024 * 1024, integer=True)
TRACE_MEMORY_DEFAULT = 8192
TRACE_WORKERS = Number("a whole number of workers", "", minimum=1, maximum=64, integer=True)
TRACE_WORKERS_DEFAULT = 2
TRACE_IDLE = Number("a number of seconds", "s", minimum=0.0, maximum=86_400.0)
TRACE_IDLE_DEFAULT = 300.0
TCP_AUTH = Number("a number of seconds", "s", minimum=1.0, maximum=3600.0, positive=True)
TCP_AUTH_DEFAULT = 10.0
CHECK_WORKERS = Number("a whole number of workers", "", minimum=0, maximum=1024, integer=True)


def _environment_subject(name: str, value: str) -> str:
    return f"{name}={shown(value)}"


def _number_from_environment(name: str, spec: Number, default, problems: list[str] | None):
    value = os.environ.get(name)
    if value is None:
        return default
    return spec.check(value, _environment_subject(name, value), default,
                      [] if problems is None else problems)


def probe_timeout(problems: list[str] | None = None) -> float:
    """`PALLAS_LSP_PROBE_TIMEOUT`: how long a Python may take to answer its probe. At least 1 s: a
    healthy interpreter (even on a loaded machine) must not be reported as one that never answers."""
    return _number_from_environment("PALLAS_LSP_PROBE_TIMEOUT", PROBE_TIMEOUT, PROBE_TIMEOUT_DEFAULT,
                                    problems)


def trace_memory_mb(problems: list[str] | None = None) -> int:
    """`PALLAS_LSP_TRACE_MEMORY_MB`: address space a trace may add (0: no limit)."""
    return _number_from_environment("PALLAS_LSP_TRACE_MEMORY_MB", TRACE_MEMORY, TRACE_MEMORY_DEFAULT,
                                    problems)


def trace_workers(problems: list[str] | None = None) -> int:
    """`PALLAS_LSP_TRACE_WORKERS`: how many warm trace workers (jax imported, ~190 MB each) stay at most;
    the least recently used goes first."""
    return _number_from_environment("PALLAS_LSP_TRACE_WORKERS", TRACE_WORKERS, TRACE_WORKERS_DEFAULT, problems)


def trace_idle_seconds(problems: list[str] | None = None) -> float:
    """`PALLAS_LSP_TRACE_IDLE_SECONDS`: how long a warm trace worker waits for its next trace before it exits."""
    return _number_from_environment("PALLAS_LSP_TRACE_IDLE_SECONDS", TRACE_IDLE, TRACE_IDLE_DEFAULT, problems)


def tcp_auth_seconds(problems: list[str] | None = None) -> float:
    """`PALLAS_LSP_TCP_AUTH_SECONDS`: how long a `serve --tcp` connection has, from connecting, to show
    the token (tests shorten it)."""
    return _number_from_environment("PALLAS_LSP_TCP_AUTH_SECONDS", TCP_AUTH, TCP_AUTH_DEFAULT, problems)


def check_workers(problems: list[str] | None = None) -> int | None:
    """`PALLAS_LSP_CHECK_WORKERS`: worker processes `check` starts beside itself (still at most `--jobs`
    less one, and the CPUs), instead of as many as its work is worth on the CPUs free (None: unset)."""
    value = os.environ.get("PALLAS_LSP_CHECK_WORKERS")
    if value is None or not value.strip():
        return None
    subject = _environment_subject("PALLAS_LSP_CHECK_WORKERS", value)
    found = CHECK_WORKERS.check(value, subject, -1, [])
    if found == -1:  # refused: `check` chooses, as when it is not set
        if problems is not None:
            problems.append(f"{subject} is not {CHECK_WORKERS.requirement()}: chosen from the work and the CPUs free")
        return None
    return _number_from_environment("PALLAS_LSP_CHECK_WORKERS", CHECK_WORKERS, None, problems)


def docs_url(problems: list[str] | None = None) -> str | None:
    """`PALLAS_LSP_DOCS_URL`: a docs site for the rule links (None: the packaged pages)."""
    value = os.environ.get("PALLAS_LSP_DOCS_URL")
    if not value or not value.strip():
        return None
    why = web_address(value.strip())
    if why is not None:
        if problems is not None:
            problems.append(f"{_environment_subject('PALLAS_LSP_DOCS_URL', value)} {why}: "
                            "the rule links go to their default pages")
        return None
    return value.strip()


def environment_problems() -> list[str]:
    """What is wrong with the `PALLAS_LSP_*` variables set now (`PALLAS_LSP_CACHE_DIR` takes any
    path; the cache module checks the folder itself)."""
    problems: list[str] = []
    probe_timeout(problems)
    trace_memory_mb(problems)
    trace_workers(problems)
    trace_idle_seconds(problems)
    tcp_auth_seconds(problems)
    check_workers(problems)
    docs_url(problems)
    return problems
