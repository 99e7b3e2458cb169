"""No hang and no traceback on odd files and settings: FIFOs, dangling symlinks, symlink loops,
unreadable files, an interpreter that never exits, typos in rule selection and settings; and a
repository cannot make `check` run a program of its choosing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import pytest
from conftest import jax_python
from pallas_lsp import cli as cli_module
from pallas_lsp.interpreters import refusal_of_project_choice

KERNEL = textwrap.dedent("""\
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu
    import jax.numpy as jnp


    def body(o_ref):
        buf = pl.get_global(plgpu.SMEM((128,), jnp.float32))
""")
KNOWN = "known: PAL000, PAL001, PAL002"
NEVER_EXITS = "#!/bin/sh\ntouch \"$(dirname \"$0\")/RAN\"\nexec sleep 1000\n"


def cli(*args, cwd, env=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "pallas_lsp", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env=env)


def test_fifo_dangling_symlink_loop_are_skipped_with_a_warning_and_the_rest_checked(tmp_path):
    (tmp_path / "ok.py").write_text(KERNEL)
    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / ".#k.py").symlink_to("/nonexistent/k.py")  # an editor's lock file
    (tmp_path / "loop1.py").symlink_to("loop2.py")
    (tmp_path / "loop2.py").symlink_to("loop1.py")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "up").symlink_to("..")  # a folder loop: folder links are not followed
    run = cli("check", "--no-jedi", "--format", "json", ".", cwd=tmp_path)
    assert run.stderr == ("pallas-lsp: warning: .#k.py: skipped: a dangling symlink\n"
                          "pallas-lsp: warning: fifo.py: skipped: not a regular file\n"
                          "pallas-lsp: warning: loop1.py: skipped: Too many levels of symbolic links\n"
                          "pallas-lsp: warning: loop2.py: skipped: Too many levels of symbolic links\n")
    assert [(f["path"], f["code"]) for f in json.loads(run.stdout)] == [("ok.py", "PAL001")]
    assert run.returncode == 1
    named = cli("check", "--no-jedi", "fifo.py", cwd=tmp_path)
    assert (named.returncode, named.stderr) == (2, "pallas-lsp: error: not a regular file or folder: fifo.py\n")


def test_an_unreadable_file_is_skipped_with_a_warning(tmp_path, monkeypatch, capsys):
    (tmp_path / "ok.py").write_text(KERNEL)
    (tmp_path / "secret.py").write_text(KERNEL)
    real_open = os.open

    def no_permission(path, *args, **kwargs):  # root reads any file: refuse this one the way the OS would
        if str(path).endswith("secret.py"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", no_permission)
    status = cli_module.main(["check", "--no-jedi", str(tmp_path)])
    out, err = capsys.readouterr()
    assert err.endswith("secret.py: skipped: Permission denied\n")
    assert status == 1 and "ok.py:7:11: PAL001" in out and "secret.py:" not in out


@pytest.mark.skipif(os.geteuid() == 0, reason="root may read a file without read permission")
def test_an_unreadable_file_is_skipped_for_real(tmp_path):
    (tmp_path / "ok.py").write_text(KERNEL)
    (tmp_path / "secret.py").write_text(KERNEL)
    os.chmod(tmp_path / "secret.py", 0)
    run = cli("check", "--no-jedi", ".", cwd=tmp_path)
    assert run.stderr == "pallas-lsp: warning: secret.py: skipped: Permission denied\n"
    assert run.returncode == 1


@pytest.mark.parametrize("args, message", [
    (["--select", "NOPE"], f"--select: unknown rule code NOPE ({KNOWN}"),
    (["--select", "PAL001,PAL9"], f"--select: unknown rule code PAL9 ({KNOWN}"),
    (["--ignore", "PAL01X"], f"--ignore: unknown rule code PAL01X ({KNOWN}"),
])
def test_rule_selection_typos_are_usage_errors(tmp_path, args, message):
    (tmp_path / "k.py").write_text(KERNEL)
    run = cli("check", "--no-jedi", *args, "k.py", cwd=tmp_path)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith(f"pallas-lsp: error: {message}")


@pytest.mark.parametrize("pyproject, message", [
    ('[tool.pallas-lsp]\nselect = ["NOPE"]\n', '[tool.pallas-lsp] select: unknown rule code NOPE'),
    ('[tool.pallas-lsp]\nselct = ["PAL001"]\n', "[tool.pallas-lsp]: unknown key 'selct' (known: select, ignore, per-file-ignores, python, platform, exclude, extend-exclude)"),
    ("tool = 5\n", "[tool] must be a table, not int 5"),
])
def test_settings_typos_are_usage_errors(tmp_path, pyproject, message):
    (tmp_path / "pyproject.toml").write_text(pyproject)
    (tmp_path / "k.py").write_text(KERNEL)
    run = cli("check", "--no-jedi", "k.py", cwd=tmp_path)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith(f"pallas-lsp: error: {tmp_path / 'pyproject.toml'}: {message}")


def test_ignore_all_says_nothing_was_checked(tmp_path):
    """ruff exits 0 for `--ignore ALL` (a deliberate configuration); so do we, but never as "All checks passed!"."""
    (tmp_path / "k.py").write_text(KERNEL)
    run = cli("check", "--no-jedi", "--ignore", "ALL", "k.py", cwd=tmp_path)
    assert (run.returncode, run.stdout) == (0, "No rules enabled: nothing checked (1 file).\n")
    assert run.stderr == "pallas-lsp: warning: no rules are enabled (select/ignore leave none): nothing is checked\n"


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-1", "soon"])
def test_trace_timeout_must_be_a_positive_number(tmp_path, value):
    (tmp_path / "k.py").write_text(KERNEL)
    run = cli("trace", "--timeout", value, "k.py::body", cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr.splitlines()[-1].startswith("pallas-lsp: error: argument --timeout: ")


# ---- interpreters ---------------------------------------------------------------------------------


def never_exiting_program(folder: Path) -> Path:
    program = folder / "tool.sh"
    program.write_text(NEVER_EXITS)
    program.chmod(0o755)
    return program


def test_an_interpreter_that_never_exits_is_timed_out_and_reported(tmp_path):
    (tmp_path / "k.py").write_text(KERNEL)
    never_exiting_program(tmp_path)
    env = {**os.environ, "PALLAS_LSP_PROBE_TIMEOUT": "3"}
    run = cli("check", "--python", "tool.sh", "k.py", cwd=tmp_path, env=env)
    assert run.returncode == 2
    assert run.stderr == (f"pallas-lsp: error: cannot use Python environment tool.sh: {tmp_path / 'tool.sh'} did not "
                          "answer within 3 s (is it a Python interpreter?); stopped it\n")


def test_a_repository_chosen_program_is_not_run_by_check(tmp_path):
    """`[tool.pallas-lsp] python = "tool.sh"` in an untrusted pull request: check warns and does not run it."""
    (tmp_path / "k.py").write_text(KERNEL)
    never_exiting_program(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.pallas-lsp]\npython = "tool.sh"\n')
    run = cli("check", "--format", "json", "k.py", cwd=tmp_path)
    assert not (tmp_path / "RAN").exists()
    assert run.stderr == (f"pallas-lsp: warning: {tmp_path / 'pyproject.toml'}: [tool.pallas-lsp] python = 'tool.sh' "
                          "is not used: it is not in a virtual environment inside the project. A repository may only "
                          "choose a Python of its own virtual environment; pass it with --python (or the editor's "
                          "`python` setting) to use it anyway\n")
    assert [f["code"] for f in json.loads(run.stdout)] == ["PAL001"]


def test_a_fake_virtual_environment_in_the_repository_is_refused(tmp_path):
    fake = tmp_path / ".venv"
    (fake / "bin").mkdir(parents=True)
    (fake / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (fake / "bin" / "python").write_text(NEVER_EXITS)
    (fake / "bin" / "python").chmod(0o755)
    assert refusal_of_project_choice(str(fake / "bin" / "python"), str(tmp_path)) == \
        "it is a file inside the repository, not a link to a Python installed on this machine"
    (fake / "bin" / "python").unlink()
    (fake / "bin" / "python").symlink_to("/bin/sh")
    assert refusal_of_project_choice(str(fake / "bin" / "python"), str(tmp_path)) == \
        f"it links to {os.path.realpath('/bin/sh')}, which is not named like a Python interpreter"
    assert refusal_of_project_choice("/bin/sh", str(tmp_path)) == "it is not in a virtual environment inside the project"


def test_a_virtual_environment_committed_to_the_repository_is_refused(tmp_path):
    """A committed venv whose python links to the system's: its site-packages could hold a `.pth`
    file that Python runs at start-up, so it is the repository's code too."""
    venv.create(tmp_path / ".venv", symlinks=True, with_pip=False)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "-f", ".venv/pyvenv.cfg"], check=True)
    assert refusal_of_project_choice(str(tmp_path / ".venv" / "bin" / "python"), str(tmp_path)) == (
        "its virtual environment is committed to the repository (a .pth file in it would run when Python starts)")


def test_the_projects_own_virtual_environment_is_honoured(tmp_path):
    """In a git checkout whose pyproject.toml is tracked and whose venv is not (outside a git checkout
    nothing shows the venv was made here: tests/test_shipped_virtual_environments.py)."""
    venv.create(tmp_path / ".venv", symlinks=True, with_pip=False)
    (tmp_path / "pyproject.toml").write_text('[tool.pallas-lsp]\npython = ".venv/bin/python"\n')
    (tmp_path / "k.py").write_text(KERNEL)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "pyproject.toml", "k.py"], check=True)
    assert refusal_of_project_choice(str(tmp_path / ".venv" / "bin" / "python"), str(tmp_path)) is None
    assert refusal_of_project_choice(str(tmp_path / ".venv"), str(tmp_path)) is None
    run = cli("check", "-v", "k.py", cwd=tmp_path)
    assert "is not used" not in run.stderr and run.returncode == 1
