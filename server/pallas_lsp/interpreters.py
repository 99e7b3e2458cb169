"""Which Python interpreter the analysed project uses, and whether it may be run at all.

Two dangers: a `python` setting pointing at a program that never exits (jedi would wait for it
forever: `check` hangs, the server never answers `initialize`), and a repository choosing the
program itself (`[tool.pallas-lsp] python = "tool.sh"`): checking an untrusted pull request must
not execute code from it. No jedi here: the trace command imports this where only jax is installed.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess

PROBE_TIMEOUT_S = float(os.environ.get("PALLAS_LSP_PROBE_TIMEOUT", "10"))
_PYTHON_NAME = re.compile(r"python(\d+(\.\d+)?)?(\.exe)?", re.IGNORECASE)
_PROBE = "import sys; print('pallas-lsp-probe', sys.version_info[0], sys.version_info[1])"


class InterpreterError(Exception):
    """The interpreter cannot be used; the message says why, for the user."""


def interpreter_executable(path: str) -> str | None:
    """The interpreter of a path given as an interpreter or a virtual-environment folder (None: none there)."""
    path = os.path.abspath(os.path.expanduser(path))
    if os.path.isdir(path):
        for candidate in ("bin/python", "bin/python3", "Scripts/python.exe"):
            if os.path.exists(os.path.join(path, candidate)):
                return os.path.join(path, candidate)
        return None
    return path if os.path.exists(path) else None


def probe(executable: str, timeout: float | None = None) -> tuple[int, int]:
    """Run the interpreter once, with a time limit, and check it is a Python: (major, minor).

    A program that never exits, or that is no Python, is refused with a clear message instead of
    leaving jedi waiting on it. The probe runs in its own process group, killed whole on timeout.
    """
    timeout = PROBE_TIMEOUT_S if timeout is None else timeout
    try:
        child = subprocess.Popen([executable, "-c", _PROBE], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        raise InterpreterError(f"cannot run {executable}: {exc.strerror or exc}") from None
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(child)
        raise InterpreterError(f"{executable} did not answer within {timeout:g} s (is it a Python interpreter?); "
                               "stopped it") from None
    match = re.search(rb"pallas-lsp-probe (\d+) (\d+)", out)
    if child.returncode != 0 or match is None:
        detail = (err or out).decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit status {child.returncode}"]
        raise InterpreterError(f"{executable} is not a working Python interpreter ({detail[0][:200]})")
    return int(match.group(1)), int(match.group(2))


def _kill_group(child: subprocess.Popen) -> None:
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except OSError:
        child.kill()
    try:
        child.communicate(timeout=5)
    except (subprocess.TimeoutExpired, OSError, ValueError):
        pass


def refusal_of_project_choice(python: str, project_root: str) -> str | None:
    """Why a `python` chosen by the analysed repository itself (pyproject.toml) must not be run;
    None when it may be: it lies in a virtual environment inside the project (a folder with
    `pyvenv.cfg` under the project root), is named like a Python, and resolves to a file outside
    the project (a venv's `bin/python` is a link to a Python installed on the machine; a program
    committed to the repository is not)."""
    root = os.path.realpath(project_root)
    path = os.path.abspath(python)
    executable = interpreter_executable(path)
    if executable is None:
        return None  # nothing there to run: the environment loader reports it as not found
    inside = os.path.commonpath([os.path.realpath(os.path.dirname(executable)), root]) == root
    venv = _virtual_environment_of(executable, root)
    if not inside or venv is None:
        return "it is not in a virtual environment inside the project"
    if not _PYTHON_NAME.fullmatch(os.path.basename(executable)):
        return "it is not named like a Python interpreter"
    if _committed(venv, root):
        return ("its virtual environment is committed to the repository (a .pth file in it would run "
                "when Python starts)")
    target = os.path.realpath(executable)
    if os.path.commonpath([target, root]) == root:
        return "it is a file inside the repository, not a link to a Python installed on this machine"
    if not _PYTHON_NAME.fullmatch(os.path.basename(target)) or not os.path.isfile(target):
        return f"it links to {target}, which is not named like a Python interpreter"
    return None


def _virtual_environment_of(executable: str, root: str) -> str | None:
    """The folder holding `pyvenv.cfg` that `executable` (…/bin/python) belongs to, if under `root`."""
    folder = os.path.dirname(os.path.dirname(executable))
    if os.path.isfile(os.path.join(folder, "pyvenv.cfg")) and \
            os.path.commonpath([os.path.realpath(folder), root]) == root:
        return folder
    return None


def _committed(folder: str, root: str) -> bool:
    """Whether git tracks files of `folder` (a venv made on this machine is not committed; one that
    comes with the repository's content is the repository's code). Not a git checkout: False."""
    try:
        listed = subprocess.run(["git", "-C", root, "ls-files", "-z", "--", os.path.relpath(folder, root)],
                                capture_output=True, timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return listed.returncode == 0 and bool(listed.stdout)
