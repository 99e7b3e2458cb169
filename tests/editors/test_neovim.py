"""A real Neovim, headless, runs the config of docs/editors.md and drives pallas-lsp like a user:
one session (tests/editors/neovim_session.lua) per module, one test per thing the user sees."""

from __future__ import annotations

import shutil

import pytest

from conftest import jax_python
from editor_harness import (HERE, REPO, PAL001_MESSAGE, Kernel, WhatEveryEditorShows, require_editor, run_editor,
                            snippet_from_docs)

pytestmark = pytest.mark.timeout(240)

# Debian's Neovim (0.7: the config's start_client branch) and the PyPI wheel's (0.11: vim.lsp.start).
NEOVIMS = {
    "apt": lambda: shutil.which("nvim"),
    "pypi": lambda: str(REPO / ".venvs" / "editors" / "bin" / "nvim")
    if (REPO / ".venvs" / "editors" / "bin" / "nvim").exists() else None,
}


@pytest.fixture(scope="module", params=sorted(NEOVIMS))
def session(request, tmp_path_factory):
    nvim = NEOVIMS[request.param]()
    require_editor(f"Neovim ({request.param})", nvim is not None)
    tmp_path = tmp_path_factory.mktemp(f"neovim-{request.param}")
    kernel = Kernel.copy_example(tmp_path)
    (kernel.root / "other_kernel.py").write_text("from jax.experimental import pallas as pl\n")
    home = tmp_path / "home"
    ftplugin = home / "config" / "nvim" / "after" / "ftplugin" / "python.lua"  # where docs/editors.md says
    ftplugin.parent.mkdir(parents=True)
    ftplugin.write_text(snippet_from_docs("neovim", jax_python()))
    logs = [home / "cache" / "nvim" / "lsp.log", home / "state" / "nvim" / "lsp.log"]  # Neovim 0.7 / 0.8+
    command = [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-c", f"luafile {HERE / 'neovim_session.lua'}"]
    run = run_editor(command, kernel, home, logs, tmp_path / "neovim.json")
    assert run.result["has_vim_lsp_start"] is (request.param == "pypi"), run.log  # both branches of the config run
    return kernel, run.result, run.log


class TestNeovim(WhatEveryEditorShows):
    def test_the_config_starts_pallas_lsp(self, session):
        _, result, log = session
        assert result["client_name"] == "pallas-lsp", log

    def test_one_server_per_project(self, session):
        _, result, log = session
        assert (result["second_file_client"], result["running_clients"]) == (True, 1), log

    def test_a_settings_change_rechecks_the_open_file(self, session):
        """Ignoring PAL001 through workspace/configuration clears it, un-ignoring brings it back.

        Neovim 0.11 pulls diagnostics but cannot be asked to pull again (no refreshSupport), so the
        server pushes to it instead; Neovim 0.7 never pulls."""
        _, result, log = session
        assert result["settings_change"] == {"cleared": True, "back": True}, log

    def test_pal001_on_the_get_global_call(self, session):
        kernel, result, log = session
        line, start, end = kernel.bad_call()
        # Neovim holds diagnostics 0-based, columns in bytes, end exclusive (the file is ASCII).
        assert result["diagnostics"] == [{
            "lnum": line, "col": start, "end_lnum": line, "end_col": end,
            "severity": "error", "source": "pallas-lsp", "code": "PAL001", "message": PAL001_MESSAGE,
        }], log
