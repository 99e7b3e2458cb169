"""The analysed project's Python environment, as jedi sees it.

Names are resolved against the interpreter the user's code runs under (it has jax; the server's
own interpreter need not), chosen as: an explicit path (or a command name on PATH, such as
`python3`), else `$VIRTUAL_ENV`, else this interpreter.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from functools import lru_cache

from ..interpreters import InterpreterError, interpreter_executable, probe
from ..python_path import resolve_python


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


@lru_cache(maxsize=8)
def load_environment(path: str) -> PythonEnvironment:
    """A jedi environment for an interpreter or a virtual environment folder."""
    target = resolve_python(path)
    if not os.path.exists(target):
        raise EnvironmentError_(f"Python environment not found: {path}")
    executable = interpreter_executable(target)
    if executable is None:
        raise EnvironmentError_(f"no Python interpreter in {path}")
    try:
        probe(executable)  # jedi would wait forever on a program that never exits
    except InterpreterError as exc:
        raise EnvironmentError_(f"cannot use Python environment {path}: {exc}") from None
    import jedi  # here, not at the server's start (a fifth of its import time)

    try:
        env = jedi.create_environment(target, safe=False)
        env.get_sys_path()  # fails now, with a clear message, if the interpreter cannot run
    except Exception as exc:  # jedi raises several unrelated types for a broken interpreter
        raise EnvironmentError_(f"cannot use Python environment {path}: {exc}") from exc
    return PythonEnvironment(getattr(env, "executable", target), env)
