"""A real Emacs with eglot, in batch mode, runs the config of docs/editors.md and drives pallas-lsp
like a user: one session (tests/editors/eglot_session.el) per module, one test per thing seen."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import jax_python
from editor_harness import (HERE, PAL001_MESSAGE, Kernel, WhatEveryEditorShows, require_editor, run_editor,
                            snippet_from_docs)

pytestmark = pytest.mark.timeout(240)


def eglot_available() -> bool:
    if shutil.which("emacs") is None:
        return False
    probe = subprocess.run(["emacs", "--batch", "--eval", "(require 'eglot)"],
                           capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    return probe.returncode == 0


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    require_editor("Emacs with eglot", eglot_available())
    tmp_path = tmp_path_factory.mktemp("emacs")
    kernel = Kernel.copy_example(tmp_path)
    home = tmp_path / "home"
    init = tmp_path / "init.el"  # the user's init file: the block of docs/editors.md
    init.write_text(snippet_from_docs("emacs-eglot", jax_python()))
    result = tmp_path / "emacs.json"
    command = ["emacs", "--batch", "-l", str(init), "-l", str(HERE / "eglot_session.el")]
    run = run_editor(command, kernel, home, [tmp_path / "emacs.json.events.log"], result)
    return kernel, run.result, run.log


def flymake_position(kernel: Kernel, line: int, column: int) -> int:
    """Emacs buffer position (1-based, in characters) of a 0-based line and column."""
    return sum(len(text) + 1 for text in kernel.lines[:line]) + column + 1


class TestEmacsEglot(WhatEveryEditorShows):
    def test_the_config_starts_pallas_lsp(self, session):
        _, result, log = session
        assert result["server_name"] == "pallas-lsp", log
        assert result["flymake_mode"] is True, log

    def test_pal001_on_the_get_global_call(self, session):
        kernel, result, log = session
        line, start, end = kernel.bad_call()
        # Flymake holds buffer positions; eglot keeps the LSP diagnostic it made each one from.
        assert result["diagnostics"] == [{
            "beg": flymake_position(kernel, line, start), "end": flymake_position(kernel, line, end),
            "line": line + 1, "column": start, "end_line": line + 1, "end_column": end,
            "type": "eglot-error", "text": f"pallas-lsp [PAL001]: {PAL001_MESSAGE}",
            "code": "PAL001", "source": "pallas-lsp", "message": PAL001_MESSAGE,
        }], log
