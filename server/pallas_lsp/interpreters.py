"""Which Python interpreter the analysed project uses, and whether it may be run at all.

Two dangers: a `python` setting pointing at a program that never exits (jedi would wait for it
forever: `check` hangs, the server never answers `initialize`), and a repository choosing the
program itself (`[tool.pallas-lsp] python = "tool.sh"`): checking an untrusted pull request must
not execute code from it. No jedi here: the trace command imports this where only jax is installed.
"""

from __future__ import annotations

import ast
import os
import re
import signal
import subprocess

from .checked_values import probe_timeout

PROBE_TIMEOUT_S = probe_timeout()  # PALLAS_LSP_PROBE_TIMEOUT, checked (a bad value is said at start)
_PYTHON_NAME = re.compile(r"python(\d+(\.\d+)?)?(\.exe)?", re.IGNORECASE)
# Also the interpreter's search path (a line of JSON after the marker): the workspace import index
# needs it first, and reading it from jedi's process means waiting for that process to import jedi.
# It imports nothing but `sys` (built in): the folder it runs in comes first on its path, and a repository's
# `json.py` there must never run. The path is printed as a Python literal, read back with literal_eval.
_PROBE = ("import sys; print('pallas-lsp-probe', sys.version_info[0], sys.version_info[1]); "
          "print(repr([sys.path, bool(getattr(sys.flags, 'safe_path', False))]))")


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
    """Run the interpreter once, with a time limit, and check it is a Python: (major, minor)."""
    return probe_with_path(executable, timeout)[0]


def probe_with_path(executable: str, timeout: float | None = None) -> tuple[tuple[int, int], list[str], bool]:
    """Run the interpreter once, with a time limit, and check it is a Python: ((major, minor), its
    `sys.path` as `python -c` has it, whether it runs with a safe path (`-P`: no script folder first)).

    A program that never exits, or that is no Python, is refused with a clear message instead of
    leaving jedi waiting on it. The probe runs in its own process group, killed whole on timeout.
    """
    timeout = PROBE_TIMEOUT_S if timeout is None else timeout
    try:
        returncode, out, err = _run_bounded([executable, "-c", _PROBE], timeout)
    except OSError as exc:
        raise InterpreterError(f"cannot run {executable}: {exc.strerror or exc}") from None
    except subprocess.TimeoutExpired:
        raise InterpreterError(f"{executable} did not answer within {timeout:g} s (is it a Python interpreter?); "
                               "stopped it") from None
    match = re.search(rb"pallas-lsp-probe (\d+) (\d+)\r?\n(.*)", out)
    try:
        sys_path, safe_path = ast.literal_eval(match.group(3).decode("utf-8", "surrogateescape").strip()) if match else (None, False)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):  # something printed into our line (a sitecustomize): not this interpreter's answer
        sys_path, safe_path = None, False
    if returncode != 0 or match is None or not isinstance(sys_path, list) or not all(isinstance(p, str) for p in sys_path):
        detail = _last_line(err or out, returncode)
        raise InterpreterError(f"{executable} is not a working Python interpreter ({detail})")
    return (int(match.group(1)), int(match.group(2))), sys_path, bool(safe_path)


def _run_bounded(argv: list[str], timeout: float, cwd: str | None = None,
                 env: dict[str, str] | None = None) -> tuple[int, bytes, bytes]:
    """Run a program in a process group of its own: (exit status, stdout, stderr). On timeout the
    whole group is killed (a script's children too) and TimeoutExpired raised; OSError if it cannot start."""
    child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True, cwd=cwd, env=env)
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(child)
        raise
    return child.returncode, out, err


def _last_line(output: bytes, returncode: int) -> str:
    """What a failed program said last (its error, as a rule), for a one-line message."""
    lines = output.decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:200] if lines else f"exit status {returncode}"


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
    `pyvenv.cfg` under the project root), is named like a Python, resolves to a file outside
    the project (a venv's `bin/python` is a link to a Python installed on this machine; a program
    committed to the repository is not), and git shows that the repository does not ship that
    environment (see `_why_maybe_shipped`)."""
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
    target = os.path.realpath(executable)
    if os.path.commonpath([target, root]) == root:
        return "it is a file inside the repository, not a link to a Python installed on this machine"
    if not _PYTHON_NAME.fullmatch(os.path.basename(target)) or not os.path.isfile(target):
        return f"it links to {target}, which is not named like a Python interpreter"
    return _why_maybe_shipped(venv, root)


def _virtual_environment_of(executable: str, root: str) -> str | None:
    """The folder holding `pyvenv.cfg` that `executable` (…/bin/python) belongs to, if under `root`."""
    folder = os.path.dirname(os.path.dirname(executable))
    if os.path.isfile(os.path.join(folder, "pyvenv.cfg")) and \
            os.path.commonpath([os.path.realpath(folder), root]) == root:
        return folder
    return None


# Starting Python runs code from its environment (`.pth` files, `sitecustomize`): a virtual
# environment the repository ships is the repository's code.
_RUNS_AT_START = "a .pth file in it would run when Python starts"
_NOT_SHOWN = ("so nothing shows that its virtual environment was made on this machine rather than shipped with "
              f"the project ({_RUNS_AT_START})")


class _GitFailed(Exception):
    """git did not answer; the message says why, for the user."""


def _why_maybe_shipped(venv: str, root: str) -> str | None:
    """Why the virtual environment `venv` (under the project `root`) may have come with the project's
    files instead of being made on this machine; None only when git shows it did not.

    A git checkout holds the repository's tracked files, its submodules' files and what was made
    here. So the environment must be untracked, lie in no submodule or other repository nested in
    the project, and the project's pyproject.toml must be tracked (else the project is not that
    repository's content, e.g. a tarball unpacked inside a home folder kept in git). Outside a git
    checkout nothing can show where the files came from, and a git that cannot answer shows nothing:
    both are refused."""
    top = None
    try:
        top = os.path.realpath(_git(root, "rev-parse", "--show-toplevel").removesuffix("\n"))
        folders = _environment_folders(venv, top)
        pyproject = os.path.relpath(os.path.join(root, "pyproject.toml"), top)
        tracked = _git(top, "ls-files", "-z", "--", f":(literal){pyproject}",
                       *(_literal(top, folder) for folder in folders)).split("\0")
        if any(path and path != pyproject for path in tracked):
            return f"its virtual environment is committed to the repository ({_RUNS_AT_START})"
        for folder in folders:
            nested = _nested_repository(folder, top)
            if nested is not None:
                return f"{nested} ({_RUNS_AT_START})"
        if pyproject not in tracked:
            return (f"the project's pyproject.toml is not tracked by git, {_NOT_SHOWN}; if the project is yours "
                    "and pyproject.toml is only not added yet, `git add pyproject.toml` fixes this")
    except _GitFailed as exc:
        if top is None and not any(os.path.lexists(os.path.join(up, ".git")) for up in _folder_and_parents(root)):
            return f"the project is not a git checkout, {_NOT_SHOWN}"
        return f"git cannot tell whether the repository ships its virtual environment ({exc})"
    return None


def _environment_folders(venv: str, top: str) -> list[str]:
    """The places the environment's files are in: its folder as named (a link there is itself a
    file the repository could ship), where that resolves to, and where its top-level entries
    (`bin`, `lib`, ...) resolve to when that is elsewhere in the checkout."""
    named = os.path.join(os.path.realpath(os.path.dirname(venv)), os.path.basename(venv))
    real = os.path.realpath(venv)
    for folder in (named, real):
        if not _within(folder, top):
            raise _GitFailed(f"{folder} is outside the checkout {top}")
    folders = [named] if real == named else [named, real]
    try:
        entries = sorted(os.listdir(real))
    except OSError as exc:
        raise _GitFailed(f"cannot list {real}: {exc.strerror or exc}") from None
    for entry in entries:
        target = os.path.realpath(os.path.join(real, entry))
        if not _within(target, real) and _within(target, top) and target not in folders:
            folders.append(target)
    return folders


def _nested_repository(folder: str, top: str) -> str | None:
    """Why `folder` is another repository's content, if it lies in a submodule of the checkout at
    `top` (an entry in the index, initialised or not; an initialised one has a `.git` file pointing
    into the superproject's `.git/modules`) or in another git repository below `top`; the outermost
    one is named (a submodule of a submodule is named by the one the checkout lists)."""
    why = None
    for candidate in _folder_and_parents(folder):
        if candidate == top or not _within(candidate, top):
            break
        relative = os.path.relpath(candidate, top)
        if candidate != folder and _listed_itself(top, relative):  # `folder` itself was listed as tracked
            why = f"its virtual environment is inside the git submodule {relative}, whose files the repository ships"
        elif os.path.lexists(os.path.join(candidate, ".git")):
            why = f"its virtual environment is inside {relative}, another git repository, which may ship it"
    return why


def _listed_itself(top: str, relative: str) -> bool:
    """Whether the index has an entry for the folder `relative` itself, as it has for a submodule
    (and never for a folder of tracked files, whose entries below it are excluded here)."""
    below = f":(exclude,glob){_glob_escaped(relative)}/**"
    return bool(_git(top, "ls-files", "-z", "--", f":(literal){relative}", below))


def _git(cwd: str, *arguments: str) -> str:
    """git's output, run bounded and without the repository's say over what runs: repository
    config such as `core.fsmonitor` names a program to start. Any failure raises _GitFailed."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    environment.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    try:
        returncode, out, err = _run_bounded(["git", "-c", "core.fsmonitor=false", "-C", cwd, *arguments],
                                            PROBE_TIMEOUT_S, env=environment)
    except OSError as exc:
        raise _GitFailed(f"cannot run git: {exc.strerror or exc}") from None
    except subprocess.TimeoutExpired:
        raise _GitFailed(f"git did not answer within {PROBE_TIMEOUT_S:g} s") from None
    if returncode != 0:
        raise _GitFailed(f"git {arguments[0]}: {_last_line(err, returncode)}")
    return out.decode("utf-8", "surrogateescape")


def _literal(top: str, path: str) -> str:
    """A pathspec that names `path` (under the checkout `top`) and no pattern."""
    return ":(literal)" + os.path.relpath(path, top)


def _glob_escaped(path: str) -> str:
    return re.sub(r"([*?\[\]\\])", r"\\\1", path)


def _within(path: str, folder: str) -> bool:
    return os.path.commonpath([path, folder]) == folder


def _folder_and_parents(folder: str):
    while True:
        yield folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent
