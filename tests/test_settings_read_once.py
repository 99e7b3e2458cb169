"""`check` reads each pyproject.toml once a run: a `python` setting is only used after git has shown
that the repository did not ship that environment (`refusal_of_project_choice`), and those git calls
were made again for the folder walk, the settings and the project's exclusions (three times a run)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from pallas_lsp.interpreters import refusal_of_project_choice

KERNEL = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp


def body(o_ref):
    buf = pl.get_global(plgpu.SMEM((128,), jnp.float32))
"""
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"]


def logging_git(folder: Path, log: Path) -> Path:
    """A `git` first on PATH that notes each call, then runs the real git with the same arguments."""
    folder.mkdir()
    wrapper = folder / "git"
    wrapper.write_text(f"#!/bin/sh\necho \"$*\" >> {log}\nexec {shutil.which('git')} \"$@\"\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return folder


def git_calls(log: Path) -> list[str]:
    calls = log.read_text().splitlines() if log.exists() else []
    log.unlink(missing_ok=True)
    return calls


@pytest.mark.parametrize("kernels", [1, 12], ids=["one process", "worker processes"])
def test_a_check_run_asks_git_about_the_python_setting_once(tmp_path, monkeypatch, kernels):
    if kernels > 1 and len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: check starts no worker processes")
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run([*GIT, "init", "-q"], cwd=project, check=True)
    (project / "pyproject.toml").write_text('[tool.pallas-lsp]\npython = ".venv/bin/python"\n')
    (project / ".gitignore").write_text(".venv/\n")
    for index in range(kernels):
        (project / f"k{index:02}.py").write_text(KERNEL)
    subprocess.run([*GIT, "add", "."], cwd=project, check=True)
    subprocess.run([*GIT, "commit", "-qm", "project"], cwd=project, check=True)
    venv.create(project / ".venv", symlinks=True, with_pip=False)  # made here, not shipped
    log = tmp_path / "git.log"
    path = f"{logging_git(tmp_path / 'bin', log)}{os.pathsep}{os.environ['PATH']}"
    monkeypatch.setenv("PATH", path)
    assert refusal_of_project_choice(str(project / ".venv" / "bin" / "python"), str(project)) is None
    one_answer = git_calls(log)
    assert one_answer  # the wrapper sees git's calls, so the count below can fail

    done = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--verbose", "--jobs", "2", "--no-jedi",
                           str(project)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300,
                          env={**os.environ, "PATH": path, "PALLAS_LSP_CHECK_WORKERS": "1"})  # a worker even for little work
    assert done.returncode == 1, done.stderr
    assert done.stdout.count(" PAL001 ") == kernels
    assert ("worker processes started" in done.stderr) == (kernels > 1)
    assert git_calls(log) == one_answer
