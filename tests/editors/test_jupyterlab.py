"""A real JupyterLab with jupyterlab-lsp (from PyPI, in .venvs/editors), configured with the block of
docs/editors.md, in headless Chromium (Playwright): a notebook opened in the browser shows pallas-lsp's
PAL001 squiggle in the body's cell, its message on hover (issue 23), and a kernel parameter's type as
JAX traces it on hover. (jupyterlab-lsp 5.3 sends no textDocument/codeAction: no quick fix to check.) The browser is driven by
tests/editors/jupyterlab_session.py under .venvs/editors, where Playwright is installed."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request

import pytest

from conftest import jax_python
from editor_harness import HERE, PAL001_MESSAGE, REPO, SERVER_BIN, require_editor, snippet_from_docs

pytestmark = pytest.mark.timeout(300)

EDITORS = REPO / ".venvs" / "editors" / "bin"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NOTEBOOK = REPO / "tests" / "notebooks" / "kernel.ipynb"  # cell 4 (of 8): `tile = pl.get_global(plgpu.SMEM(...))`
BAD_CALL = "pl.get_global(plgpu.SMEM((128,), jnp.float32))"
START_SECONDS = 120


def jupyterlab_with_lsp() -> bool:
    if not (EDITORS / "jupyter-lab").exists():
        return False
    found = subprocess.run([str(EDITORS / "python"), "-c", "import jupyterlab, jupyter_lsp, playwright"],
                           capture_output=True)
    return found.returncode == 0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    require_editor("JupyterLab with jupyterlab-lsp and Playwright (.venvs/editors)", jupyterlab_with_lsp())
    require_editor("Chromium", CHROMIUM is not None)
    tmp = tmp_path_factory.mktemp("jupyterlab")
    root, home, config = tmp / "notebooks", tmp / "home", tmp / "home" / ".jupyter"
    root.mkdir()
    config.mkdir(parents=True)
    shutil.copyfile(NOTEBOOK, root / "kernel.ipynb")
    # docs/editors.md's block, with the test's server (pallas-lsp in .venvs/dev) for the environment's.
    (config / "jupyter_server_config.json").write_text(snippet_from_docs("jupyterlab", str(SERVER_BIN / "python")))
    port = free_port()
    env = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update({"HOME": str(home), "JUPYTER_CONFIG_DIR": str(config), "JUPYTER_DATA_DIR": str(home / "data"),
                "JUPYTER_RUNTIME_DIR": str(home / "runtime"), "IPYTHONDIR": str(home / "ipython"),
                "PYTHONPATH": str(REPO / "server")})  # the server runs this checkout's code
    log = (tmp / "jupyterlab.log").open("w")
    process = subprocess.Popen(
        [str(EDITORS / "jupyter-lab"), "--no-browser", "--allow-root", f"--port={port}", "--ServerApp.ip=127.0.0.1",
         "--ServerApp.token=", "--ServerApp.password=", f"--ServerApp.root_dir={root}",
         "--LanguageServerManager.autodetect=False"],  # pallas-lsp alone: no other Python server's squiggles
        cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                with urllib.request.urlopen(f"{url}/lsp/status", timeout=5) as answer:
                    status = json.load(answer)
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"JupyterLab did not start:\n{(tmp / 'jupyterlab.log').read_text()}") from None
                time.sleep(0.5)
        assert list(status["specs"]) == ["pallas-lsp"], status  # the documented block was read
        yield url, tmp / "jupyterlab.log"
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def test_a_notebook_opened_in_the_browser_shows_pal001_in_the_body_s_cell(lab, tmp_path):
    url, log = lab
    session = subprocess.run(
        [str(EDITORS / "python"), str(HERE / "jupyterlab_session.py"), url, "kernel.ipynb", CHROMIUM,
         str(tmp_path / "seen.json"), str(tmp_path / "seen.png")],
        capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    assert session.returncode == 0, session.stdout + session.stderr
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert "error" not in seen, f"{seen['error']} (screenshot {tmp_path / 'seen.png'}):\n{log.read_text()}"
    assert seen["squiggles_by_cell"] == [0, 0, 0, 1, 0, 0, 0, 0]  # cell 4 of 8 (markdown cell 1 counted)
    assert seen["squiggled_text"] == [BAD_CALL]
    assert seen["hover"] == [[PAL001_MESSAGE, "pallas-lsp"]]
    # The body's scratch parameter, hovered with Control held (jupyterlab-lsp's hover): the type JAX gives it.
    assert seen["parameter_hover"].splitlines()[0] == f"stage: {jax_type_of('stage')}", seen["parameter_hover"]
    # Where the launch allocates it: a line of jupyterlab-lsp's one Python document (cells 2 to 5 joined with
    # three blank lines between them: cell 5's first line is its 24th), not a cell's line as in VS Code.
    assert seen["parameter_hover"].splitlines()[-1] == "kernel scratch from scratch_types[0] of plgpu.kernel (line 24)"


def jax_type_of(parameter: str) -> str:
    """What JAX traces the notebook kernel's body parameter as (`pallas-lsp trace`'s kernel_refs, jax 0.12)."""
    run = subprocess.run([str(SERVER_BIN / "python"), "-m", "pallas_lsp", "trace", f"{NOTEBOOK}::kernel", "--args", "f32[128]",
                          "--format", "json", "--python", jax_python()], capture_output=True, text=True, timeout=240,
                         env={**os.environ, "PYTHONPATH": str(REPO / "server")})
    (aval,) = {ref["aval"] for ref in json.loads(run.stdout)["kernel_refs"] if ref["name"] == parameter}
    return aval
