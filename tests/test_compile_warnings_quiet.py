"""CPython's own warnings from compiling a user's file (`"\\d"` in a non-raw string) never reach
stderr, as ruff prints nothing for the same file: in `check` (one process and its workers), in
`serve` started as `pallas-lsp serve` and as the VS Code extension starts it."""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO
from lsp_wire import WireServer

# Each line makes CPython 3.12+ warn when it compiles the file (SyntaxWarning).
NOISY = 'import re\nDIGITS = re.compile("\\d+")\nSAME = DIGITS is "x"\n'
# The same, in a file that mentions Pallas: it is modelled, not only compiled.
NOISY_PALLAS = "from jax.experimental import pallas as pl\n" + NOISY


@pytest.fixture
def noisy(tmp_path):
    for index in range(6):  # enough files for worker processes (--jobs 2)
        (tmp_path / f"plain_{index}.py").write_text(NOISY)
        (tmp_path / f"kernel_{index}.py").write_text(NOISY_PALLAS)
    return tmp_path


def test_python_itself_warns_on_these_files(noisy):
    run = subprocess.run([sys.executable, "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())",
                          str(noisy / "plain_0.py")], capture_output=True, text=True, timeout=60)
    assert "SyntaxWarning" in run.stderr  # what the tests below must not see


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_check_prints_no_compile_warning(noisy, jax_env, jobs):
    run = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--jobs", jobs, "--python", jax_env, "."],
                         capture_output=True, text=True, cwd=noisy, timeout=300)
    assert (run.returncode, run.stdout, run.stderr) == (0, "All checks passed! (12 files checked)\n", "")


def _serve_and_open(command, cwd, stderr_path, jax_env):
    with open(stderr_path, "wb") as stderr:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                   cwd=cwd, env=dict(os.environ))
    server = WireServer(process=process)
    try:
        server.initialize(str(cwd), python=jax_env)
        for name in ("plain_0.py", "kernel_0.py"):
            uri = (cwd / name).as_uri()
            server.open(uri, (cwd / name).read_text())
            assert server.published(uri) == []
        server.request(1, "shutdown")
        server.send({"jsonrpc": "2.0", "method": "exit"})
        assert server.exit_code() == 0
    finally:
        server.kill()
    return stderr_path.read_text()


def test_serve_prints_no_compile_warning(noisy, tmp_path_factory, jax_env):
    stderr = _serve_and_open([sys.executable, "-m", "pallas_lsp", "serve"], noisy,
                             tmp_path_factory.mktemp("serve") / "stderr", jax_env)
    assert "Warning" not in stderr, stderr


def test_the_vscode_launcher_prints_no_compile_warning(noisy, tmp_path_factory, jax_env):
    """The extension starts bundled/tool/launch_server.py, which calls the server's own main; its
    libraries (here: none, the checkout's server is on PYTHONPATH) come from bundled/libs."""
    bundled = tmp_path_factory.mktemp("bundled")
    (bundled / "tool").mkdir()
    shutil.copy(REPO / "client-vscode" / "bundled" / "tool" / "launch_server.py", bundled / "tool")
    (bundled / "libs" / f"cp{sys.version_info[0]}{sys.version_info[1]}").mkdir(parents=True)
    (bundled / "libs" / "common").mkdir()
    stderr = _serve_and_open([sys.executable, str(bundled / "tool" / "launch_server.py")], noisy,
                             bundled / "stderr", jax_env)
    assert "Warning" not in stderr, stderr
