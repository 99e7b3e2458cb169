"""A repository's settings files cannot hang pallas-lsp or stand in for a parent folder's: a FIFO (or a
link to one, or to /proc/kmsg) as `pyproject.toml` or `.gitignore`, and an oversized `pyproject.toml`,
are not read, said once with their path, and the defaults apply; `check` and the server go on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from lsp_wire import WireServer

KERNEL = textwrap.dedent("""\
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu
    import jax.numpy as jnp


    def body(o_ref):
        buf = pl.get_global(plgpu.SMEM((128,), jnp.float32))
""")
SAFETY_NET = 120  # a hang fails here; a healthy run takes seconds


def check(folder):
    return subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--no-jedi", "--format", "json", "."],
                          capture_output=True, text=True, cwd=folder, timeout=SAFETY_NET)


def not_read(path, why: str) -> str:
    return f"pallas-lsp: warning: {path}: not read: {why}; the default settings apply\n"


@pytest.mark.parametrize("linked", [False, True], ids=["fifo", "link-to-fifo"])
def test_a_fifo_pyproject_is_said_and_check_goes_on_with_the_defaults(tmp_path, linked):
    """Before: `find_pyproject` passed over it silently (a parent folder's pyproject.toml, here one that
    ignores every rule, then applied); a link to /proc/kmsg, a regular file that never ends, hung check."""
    (tmp_path / "pyproject.toml").write_text('[tool.pallas-lsp]\nignore = ["ALL"]\n')
    project = tmp_path / "project"
    project.mkdir()
    (project / "kernel.py").write_text(KERNEL)
    if linked:
        os.mkfifo(tmp_path / "settings.fifo")
        (project / "pyproject.toml").symlink_to(tmp_path / "settings.fifo")
    else:
        os.mkfifo(project / "pyproject.toml")
    run = check(project)
    assert run.stderr == not_read(project / "pyproject.toml", "not a regular file")
    assert [(f["path"], f["code"]) for f in json.loads(run.stdout)] == [("kernel.py", "PAL001")]
    assert run.returncode == 1


def test_an_oversized_pyproject_is_said_and_not_parsed(tmp_path):
    """TOML is parsed in Python: a crafted 5 MB pyproject.toml took 4 s at every settings load."""
    (tmp_path / "kernel.py").write_text(KERNEL)
    text = '[tool.pallas-lsp]\nignore = ["ALL"]\n' + "# padding\n" * 100_001
    (tmp_path / "pyproject.toml").write_text(text)
    run = check(tmp_path)
    assert run.stderr == not_read(tmp_path / "pyproject.toml",
                                  f"{len(text):,} bytes, over the 1 MB limit for settings files")
    assert [(f["path"], f["code"]) for f in json.loads(run.stdout)] == [("kernel.py", "PAL001")]


def test_a_pyproject_python_cannot_parse_is_an_error_not_a_traceback(tmp_path):
    """tomllib raises RecursionError for deep arrays and a bare ValueError for a 5,000-digit integer."""
    (tmp_path / "kernel.py").write_text(KERNEL)
    for toml, why in (("a = " + "[" * 3000 + "]" * 3000, "nested too deeply"),
                      ("a = " + "7" * 5000, "Exceeds the limit (4300 digits) for integer string conversion")):
        (tmp_path / "pyproject.toml").write_text(toml + "\n")
        run = check(tmp_path)
        assert run.returncode == 2
        assert run.stderr.startswith(f"pallas-lsp: error: {tmp_path / 'pyproject.toml'}: cannot read settings: {why}")
        assert "Traceback" not in run.stderr


def test_a_fifo_gitignore_is_said_once(tmp_path):
    (tmp_path / ".git").mkdir()
    os.mkfifo(tmp_path / ".gitignore")
    (tmp_path / "kernel.py").write_text(KERNEL)
    run = check(tmp_path)
    assert run.stderr == (f"pallas-lsp: warning: {tmp_path / '.gitignore'}: not read: not a regular file; its "
                          "patterns do not apply\n")
    assert [(f["path"], f["code"]) for f in json.loads(run.stdout)] == [("kernel.py", "PAL001")]


def test_the_server_answers_initialize_and_shutdown_with_a_fifo_pyproject(tmp_path):
    os.mkfifo(tmp_path / "settings.fifo")
    (tmp_path / "pyproject.toml").symlink_to(tmp_path / "settings.fifo")
    (tmp_path / "kernel.py").write_text(KERNEL)
    server = WireServer(cwd=tmp_path)
    try:
        answer = server.request(0, "initialize", {"processId": None, "rootUri": f"file://{tmp_path}",
                                                  "capabilities": {}, "initializationOptions": {"debounceMs": 0}})
        assert answer is not None and "capabilities" in answer["result"]
        server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        warning = server.wait_for(lambda m: m.get("method") == "window/logMessage"
                                  and f"{tmp_path / 'pyproject.toml'}: not read" in m["params"]["message"])
        assert warning is not None, server.stderr.decode()
        assert warning["params"]["message"].endswith(
            f"{tmp_path / 'pyproject.toml'}: not read: not a regular file; the default settings apply")
        shown = server.wait_for(lambda m: m.get("method") == "window/showMessage"
                                and f"{tmp_path / 'pyproject.toml'}: not read" in m["params"]["message"])
        assert shown is not None and shown["params"]["type"] == 2  # a warning the user sees, not only a log line
        uri = f"file://{tmp_path / 'kernel.py'}"
        server.open(uri, KERNEL)
        assert [d["code"] for d in server.published(uri)] == ["PAL001"]  # the defaults apply
        assert server.request(1, "shutdown") == {"jsonrpc": "2.0", "id": 1, "result": None}
        server.send({"jsonrpc": "2.0", "method": "exit"})
        assert server.exit_code() == 0
    finally:
        server.kill()
