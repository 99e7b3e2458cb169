"""What the editor tests share: the tested snippets of docs/editors.md, a kernel workspace, and a
headless editor run with a hard timeout whose logs end up in the failure message."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import jax_python

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
DOC = REPO / "docs" / "editors.md"
SETUP_SCRIPT = "scripts/setup-editors.sh"
SERVER_BIN = REPO / ".venvs" / "dev" / "bin"
EXAMPLE = REPO / "examples" / "kernels" / "pal001_global_buffer.py"
# A second launch, whose arguments no comment, annotation or call gives: its trace asks for them.
LAUNCH_WITHOUT_ARGUMENTS = "\n\ndef scale_twice(x):\n  return scale(scale(x))\n"
PYTHON_PLACEHOLDER = "/path/to/project/.venv/bin/python"

# What the user reads on the get_global line of the example (the CLI prints the same text).
PAL001_MESSAGE = (
    'JAX: "get_global only supports semaphores, got Ref<smem>{float32[128]}"; allocate it as '
    "scratch. Use scratch_types of plgpu.kernel or pl.run_scoped; get_global only allocates "
    "plgpu.SemaphoreType.REGULAR semaphores")
BAD_CALL = "pl.get_global(plgpu.SMEM((COLS,), jnp.float32))"
FIXED_CALL = "pl.get_global(plgpu.SemaphoreType.REGULAR)"
# The server's hover texts (Markdown) on `get_global`, before and after the fix.
HOVER_BAD = ("**pl.get_global** of `plgpu.SMEM((COLS,), jnp.float32)`\n\n"
             "Inferred: `Ref<smem>{float32[128]}`: not a Mosaic GPU REGULAR semaphore: JAX rejects it (PAL001)\n\n"
             "This call is reported: PAL001 get-global-not-semaphore (error).")
HOVER_FIXED = ("**pl.get_global** of `plgpu.SemaphoreType.REGULAR`\n\n"
               "Inferred: `Ref<gmem>{semaphore[]}`: a Mosaic GPU global semaphore: what get_global is for")

# Each step of a session is a few server round trips; jedi's first look at jax takes seconds.
EDITOR_WAIT_MS = 60_000
EDITOR_TIMEOUT_S = 150


def snippet_from_docs(name: str, python: str) -> str:
    """The block of docs/editors.md marked `<!-- tested: NAME -->`, pointed at `python`."""
    text = DOC.read_text()
    match = re.search(rf"<!-- tested: {re.escape(name)} -->\s*```[a-z]*\n(.*?)```", text, re.S)
    assert match, f"docs/editors.md has no code block after '<!-- tested: {name} -->'"
    snippet = match.group(1)
    assert snippet.count(PYTHON_PLACEHOLDER) == 1, f"the {name} block must name {PYTHON_PLACEHOLDER} once"
    return snippet.replace(PYTHON_PLACEHOLDER, python)


def require_editor(name: str, available: bool) -> None:
    """Skip when the editor is missing, unless CI is set: there a missing editor is a failure."""
    if available:
        return
    message = f"{name} is not installed: run {SETUP_SCRIPT}"
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI is set, so the editor tests must run)", pytrace=False)
    pytest.skip(message)


@dataclass
class Kernel:
    """A temporary project holding a copy of the PAL001 example, owned by one test. Its folder name
    has a space: a push client (Neovim, eglot) names it `my%20project` in its URIs, and every answer
    must use that spelling (before, such a client never got diagnostics)."""

    root: Path
    path: Path

    @classmethod
    def copy_example(cls, tmp_path: Path) -> "Kernel":
        root = tmp_path / "my project"
        root.mkdir()
        (root / "pyproject.toml").write_text('[project]\nname = "kernels"\nversion = "0.1"\n')
        path = root / "scale_rows.py"
        shutil.copyfile(EXAMPLE, path)
        with path.open("a") as file:
            file.write(LAUNCH_WITHOUT_ARGUMENTS)
        return cls(root, path)

    @property
    def lines(self) -> list[str]:
        return self.path.read_text().splitlines()

    def bad_call(self) -> tuple[int, int, int]:
        """0-based line, start and end column of the offending get_global call."""
        (line,) = [i for i, text in enumerate(self.lines) if BAD_CALL in text]
        start = self.lines[line].index(BAD_CALL)
        return line, start, start + len(BAD_CALL)

    def position_of(self, text: str) -> tuple[int, int]:
        """0-based line and column of the first occurrence of `text`."""
        for number, line in enumerate(self.lines):
            if text in line:
                return number, line.index(text)
        raise AssertionError(f"{text!r} is not in {self.path}")

    def parameter_role(self) -> str:
        """What the server's hover on the kernel's first parameter, `x_ref`, says it is."""
        launch_line, _ = self.position_of("scale = plgpu.kernel(")
        return f"kernel input from `operand 0` of `plgpu.kernel` (line {launch_line + 1})"

    def fixed_line(self) -> str:
        line, _, _ = self.bad_call()
        return self.lines[line].replace(BAD_CALL, FIXED_CALL)


@dataclass
class EditorRun:
    result: dict
    log: str


def run_editor(command: list[str], kernel: Kernel, home: Path, logs: list[Path], result_path: Path) -> EditorRun:
    """Runs a headless editor session script; fails with everything it logged if it did not finish."""
    for folder in ("config", "data", "state", "cache"):
        (home / folder).mkdir(parents=True, exist_ok=True)
    env = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update({
        # The server the editor starts runs this checkout's code, wherever .venvs/dev's editable
        # install points (a git worktree shares the main checkout's .venvs).
        "PYTHONPATH": str(REPO / "server"),
        "PATH": f"{SERVER_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"), "XDG_CACHE_HOME": str(home / "cache"),
        "PALLAS_EDITOR_FILE": str(kernel.path),
        "PALLAS_EDITOR_RESULT": str(result_path),
        "PALLAS_EDITOR_FIXED_LINE": kernel.fixed_line(),
        "PALLAS_EDITOR_WAIT_MS": str(EDITOR_WAIT_MS),
    })
    try:
        done = subprocess.run(command, cwd=kernel.root, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=EDITOR_TIMEOUT_S)
        status, stdout, stderr = f"exit status {done.returncode}", done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        done = None
        status = f"killed after {EDITOR_TIMEOUT_S} s"
        stdout, stderr = _text(exc.stdout), _text(exc.stderr)
    result = json.loads(result_path.read_text()) if result_path.exists() and result_path.read_text() else {}
    log = "\n".join([
        f"--- {' '.join(command)}: {status}",
        f"--- result: {json.dumps(result, indent=1)}",
        f"--- stdout:\n{stdout[-4000:]}", f"--- stderr:\n{stderr[-4000:]}",
        *[f"--- {path.name}:\n{path.read_text(errors='replace')[-8000:]}" for path in logs if path.exists()],
    ])
    if done is None or done.returncode != 0 or result.get("error"):
        pytest.fail(f"the editor session failed: {result.get('error', status)}\n{log}", pytrace=False)
    return EditorRun(result, log)


def _text(data) -> str:
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data


class WhatEveryEditorShows:
    """Checks shared by the editor sessions (each test module's `session` fixture gives
    (kernel, result, log)); the diagnostic itself is checked per editor, in its own terms."""

    def test_the_settings_reach_the_server(self, session):
        """The project root the config picks, and the `python` it passes, are what gets analysed."""
        kernel, result, log = session
        expected = f"{kernel.root}: analysing against {jax_python()} (Python 3.12"
        assert any(expected in message for message in result["log_messages"]), log

    def test_hover_on_get_global_shows_the_inferred_type(self, session):
        kernel, result, log = session
        line, column = kernel.position_of("get_global(")
        assert result["hover_get_global"] == {
            "line": line, "character": column, "contents": {"kind": "markdown", "value": HOVER_BAD}}, log

    def test_hover_on_a_kernel_parameter_shows_its_role(self, session):
        kernel, result, log = session
        line, column = kernel.position_of("x_ref")
        hover = result["hover_parameter"]
        assert (hover["line"], hover["character"], hover["contents"]["kind"]) == (line, column, "markdown"), log
        assert hover["contents"]["value"].startswith("```python\nx_ref: Ref<gmem>"), log
        assert kernel.parameter_role() in hover["contents"]["value"], log

    def test_inlay_hints_are_short(self, session):
        """`: f32[4,128] gmem`, what is not known left out (the operand's shape): VS Code cuts at 43."""
        kernel, result, log = session
        line, column = kernel.position_of("x_ref, o_ref")
        assert result["inlay_hints"] == [f"{line}:{column + len('x_ref')} : gmem",
                                         f"{line}:{column + len('x_ref, o_ref')} : f32[4,128] gmem"], log

    def test_the_example_has_a_trace_code_lens(self, session):
        kernel, result, log = session
        line, _ = kernel.position_of("# pallas-lsp: trace(")
        wrapper, _ = kernel.position_of("def scale_twice(")
        assert result["code_lenses"] == [f"{line + 1} Trace kernel scale",
                                         f"{wrapper} Trace kernel (arguments?) scale_twice"], log

    def test_a_trace_without_known_arguments_says_which_comment_to_write(self, session):
        """A failure of the tool, not of the code: a message with the comment to write (no CLI flag),
        prefilled from the module's ShapeDtypeStruct, and no diagnostic."""
        kernel, result, log = session
        line, _ = kernel.position_of("def scale_twice(")
        trace = result["trace_unknown_args"]
        assert trace["error"] == "ArgsNotFound", log
        assert trace["messages"][-1] == (
            "pallas-trace: scale_twice: the arguments to trace it with are not known. Write "
            f"'# pallas-lsp: trace(f32[4,128])' above line {line + 1} with the shapes and dtypes it is called with, "
            "then trace again."), log
        assert trace["trace_diagnostics"] == 0, log

    def test_the_code_action_menu_has_documentation_and_fix_all(self, session):
        """After the fixes: the rule's page, and every safe fix of the file at once."""
        _, result, log = session
        titles = [action["title"] for action in result["quick_fix"]["offered"]]
        assert titles[-2:] == ["Show documentation for PAL001", "Fix all pallas-lsp problems"], log

    def test_fixing_the_line_clears_the_diagnostic(self, session):
        kernel, result, log = session
        line, _, _ = kernel.bad_call()
        assert result["replaced"] == kernel.lines[line], log
        assert result["after_fix"] == [], log
        assert result["hover_after_fix"]["contents"] == {"kind": "markdown", "value": HOVER_FIXED}, log

    def test_the_quick_fix_is_offered_and_applied(self, session):
        """The editor's code-action menu offers pallas-lsp's PAL001 fixes; choosing the preferred
        one applies exactly the server's edit (resolved on choice where the editor resolves code
        actions, as Neovim does), and the diagnostic goes."""
        kernel, result, log = session
        fix = result["quick_fix"]
        assert fix["text_before"] == kernel.path.read_text(), log
        chosen = fix["chosen"]
        assert chosen["title"].startswith("pallas-lsp (PAL001): "), log
        assert (chosen["kind"], chosen["isPreferred"]) == ("quickfix", True), log
        assert {"title": chosen["title"], "kind": "quickfix", "isPreferred": True} in fix["offered"], log
        if "edit" in chosen:  # else the client resolved it (codeAction/resolve) when it was chosen
            assert fix["text_after"] == apply_workspace_edit(fix["text_before"], chosen["edit"], kernel.path.as_uri()), log
        assert fix["text_after"] != fix["text_before"], log
        assert fix["after"] == [], log

    def test_the_server_shuts_down_when_asked(self, session):
        _, result, log = session
        assert result["server_stopped"] is True, log


def apply_workspace_edit(text: str, edit: dict, uri: str) -> str:
    """`text` after an LSP WorkspaceEdit that only touches `uri` (ASCII text: UTF-16 units are characters)."""
    assert text.isascii()
    if "documentChanges" in edit:
        assert all(change["textDocument"]["uri"] == uri for change in edit["documentChanges"]), edit
        edits = [e for change in edit["documentChanges"] for e in change["edits"]]
    else:
        assert set(edit["changes"]) == {uri}, edit
        edits = edit["changes"][uri]
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(position: dict) -> int:
        return starts[position["line"]] + position["character"]

    for e in reversed(sorted(edits, key=lambda e: offset(e["range"]["start"]))):  # LSP order at equal starts
        text = text[:offset(e["range"]["start"])] + e["newText"] + text[offset(e["range"]["end"]):]
    return text
