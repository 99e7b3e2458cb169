"""The analysed project's Python environment, as jedi sees it.

Names are resolved against the interpreter the user's code runs under (it has jax; the server's
own interpreter need not), chosen as: an explicit path (or a command name on PATH, such as
`python3`), else `$VIRTUAL_ENV`, else this interpreter.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
import threading
from dataclasses import dataclass
from functools import lru_cache

from ..interpreters import InterpreterError, interpreter_executable, probe_with_path
from ..python_path import resolve_python

log = logging.getLogger(__name__)


class EnvironmentError_(Exception):
    """The requested interpreter cannot be used; the message says why, for the user."""


@dataclass(frozen=True)
class PythonEnvironment:
    executable: str
    jedi_env: object

    @property
    def version(self) -> str:
        info = getattr(self.jedi_env, "version_info", None)
        return ".".join(map(str, info[:3])) if info else "?"


def choose_interpreter(explicit: str | None) -> str:
    if explicit:
        return explicit
    venv = os.environ.get("VIRTUAL_ENV")
    if venv:
        return venv
    return sys.executable


_probed: dict[str, list[str]] = {}
_probe_locks: dict[str, threading.Lock] = {}
_probing = threading.Lock()


def interpreter_sys_path(path: str) -> list[str]:
    """The `sys.path` jedi's process for this interpreter reports (`load_environment`), from one bounded
    run of the interpreter: jedi's process imports jedi and parso first (a server's first analysis
    waited most of a second for it, on a fresh cache, only to learn the search path). jedi's process
    runs a script, whose folder Python puts first where `-c` puts ''. Kept per interpreter for the
    process, as jedi's environment is; raises `EnvironmentError_` when the interpreter is unusable
    (asked again next time: the user may fix it)."""
    with _probing:
        lock = _probe_locks.setdefault(path, threading.Lock())
    with lock:  # the environment thread and the analysis ask at once: one run (another interpreter's waits not)
        found = _probed.get(path)
        if found is None:
            found = _probed[path] = _probe_sys_path(path)
    return list(found)


def _probe_sys_path(path: str) -> list[str]:
    target = resolve_python(path)
    if not os.path.exists(target):
        raise EnvironmentError_(f"Python environment not found: {path}")
    executable = interpreter_executable(target)
    if executable is None:
        raise EnvironmentError_(f"no Python interpreter in {path}")
    try:
        _, sys_path, safe_path = probe_with_path(executable)  # jedi would wait forever on a program that never exits
    except InterpreterError as exc:
        raise EnvironmentError_(f"cannot use Python environment {path}: {exc}") from None
    if not safe_path and sys_path and sys_path[0] == "":
        spec = importlib.util.find_spec("jedi")  # found, not imported: jedi's import is what this avoids
        folder = os.path.dirname(spec.origin) if spec is not None and spec.origin else None
        if folder is None:
            raise EnvironmentError_(f"cannot use Python environment {path}: jedi is not installed")
        sys_path[0] = os.path.realpath(os.path.join(folder, "inference", "compiled", "subprocess"))
    return sys_path


@lru_cache(maxsize=8)
def load_environment(path: str) -> PythonEnvironment:
    """A jedi environment for an interpreter or a virtual environment folder."""
    probed = interpreter_sys_path(path)  # the interpreter runs at all, and ends (see `probe_with_path`)
    target = resolve_python(path)
    import jedi  # here, not at the server's start (a fifth of its import time)

    try:
        env = jedi.create_environment(target, safe=False)
        jedi_sys_path = [str(p) for p in env.get_sys_path()]  # fails now, with a clear message, if the interpreter cannot run
    except Exception as exc:  # jedi raises several unrelated types for a broken interpreter
        raise EnvironmentError_(f"cannot use Python environment {path}: {exc}") from exc
    if jedi_sys_path != probed:  # the import index searched another path than jedi will: say so
        log.warning("%s: the search path jedi reports %s differs from the probed %s", path, jedi_sys_path, probed)
    return PythonEnvironment(getattr(env, "executable", target), env)
