"""The command line keeps the conventions ruff users expect: `pallas-lsp rule PAL001` prints the
rule's page and `rule --all` lists the rules; `check` without PATH checks the current folder;
`check -v` says what it analysed against and where its settings came from; `--help` explains
every option, the exit statuses and the settings; the pre-commit hook takes notebooks too; and the
warning for a `python` setting in an uncommitted pyproject.toml says how to fix it."""

import os
import re
import subprocess
import sys
import venv

import pytest
import yaml

from conftest import REPO
from pallas_lsp.rules import RULES, doc_path

KERNEL = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp


def body(o_ref):
    buf = pl.get_global(plgpu.SMEM((128,), jnp.float32))
    o_ref[...] = buf[...]
"""
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"]


def cli(*args, cwd, **env):
    return subprocess.run([sys.executable, "-m", "pallas_lsp", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300, env={**os.environ, **env})


@pytest.mark.parametrize("name", ["PAL001", "pal001", "get-global-not-semaphore"])
def test_rule_prints_the_rules_page(tmp_path, name):
    run = cli("rule", name, cwd=tmp_path)
    assert (run.returncode, run.stderr) == (0, "")
    assert run.stdout == doc_path(RULES[1]).read_text()


def test_rule_all_lists_every_rule(tmp_path):
    run = cli("rule", "--all", cwd=tmp_path)
    assert run.returncode == 0
    listed = [re.split(r"\s{2,}", line, maxsplit=2) for line in run.stdout.splitlines()]
    assert listed == [[rule.CODE, rule.NAME, rule.SUMMARY] for rule in RULES]


@pytest.mark.parametrize("args,message", [
    (["PAL999"], "no rule PAL999 "),
    ([], "which rule?"),
    (["PAL001", "--all"], "not both"),
])
def test_rule_usage_errors(tmp_path, args, message):
    run = cli("rule", *args, cwd=tmp_path)
    assert run.returncode == 2 and message in run.stderr and run.stdout == ""


def test_check_without_a_path_checks_the_current_folder(tmp_path, jax_env):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "bad.py").write_text(KERNEL)
    (tmp_path / "ok.py").write_text("x = 1\n")
    run = cli("check", "--python", jax_env, cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    assert run.stdout.startswith("pkg/bad.py:7:11: PAL001 ") and run.stdout.endswith("Found 1 error.\n")


def test_check_verbose_says_what_it_analysed_against(tmp_path, jax_env):
    (tmp_path / "pyproject.toml").write_text('[tool.pallas-lsp]\nignore = ["PAL002"]\n')
    (tmp_path / "bad.py").write_text(KERNEL)
    run = cli("check", "-v", "--python", jax_env, cwd=tmp_path)
    assert run.returncode == 1
    said = [line for line in run.stderr.splitlines() if line.startswith("pallas-lsp: info: ")]
    jax = subprocess.run([jax_env, "-c", "import importlib.metadata as m; print(m.version('jax'))"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert said[0] == (f"pallas-lsp: info: settings: {tmp_path / 'pyproject.toml'} ([tool.pallas-lsp]); flags on the "
                       "command line win over it")
    assert re.fullmatch(rf"pallas-lsp: info: interpreter: \S+ \(Python 3\.\d+\.\d+, from --python\), jax {re.escape(jax)}",
                        said[1]), said[1]
    rules = ", ".join(rule.CODE for rule in RULES if rule.CODE != "PAL002")
    assert said[2] == f"pallas-lsp: info: 1 file to check; rules: {rules}"


def test_check_verbose_says_plainly_that_an_interpreter_has_no_jax(tmp_path, plain_env):
    (tmp_path / "bad.py").write_text(KERNEL)
    (tmp_path / "nb.ipynb").write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    run = cli("check", "-v", "--python", plain_env, ".", cwd=tmp_path)
    assert run.returncode == 1
    said = [line for line in run.stderr.splitlines() if line.startswith("pallas-lsp: info: ")]
    assert said[0] == f"pallas-lsp: info: settings: no pyproject.toml in {tmp_path} or a folder above it: the defaults"
    assert said[1].endswith("from --python) has no jax: names are resolved from the files' own import statements, "
                            "and rules assume the newest jax they know. Pass your project's interpreter with --python")
    assert said[2] == "pallas-lsp: info: 2 files to check (1 Python, 1 notebook); rules: all"


def _help(*command) -> str:
    run = cli(*command, "--help", cwd=REPO, COLUMNS="100")
    assert run.returncode == 0
    return run.stdout


def _option_help(text: str) -> dict[str, str]:
    """Each option or positional of an argparse help, with the text after it."""
    entries: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        match = re.match(r"^  (\S.*?)(?:\s{2,}(\S.*))?$", line)
        if match and not line.startswith("   "):
            current = match.group(1)
            entries[current] = match.group(2) or ""
        elif current and line.startswith("   ") and line.strip():
            entries[current] += " " + line.strip()
        elif not line.strip():
            current = None
    return entries


@pytest.mark.parametrize("command", [("check",), ("trace",), ("serve",), ("rule",)])
def test_every_option_has_help(command):
    text = _help(*command)
    options = {name: said for name, said in _option_help(text).items() if not name.startswith("-h")}
    assert options and [name for name, said in options.items() if not said.strip()] == []
    assert "see below" not in text


def test_check_help_says_the_exit_statuses_the_settings_and_the_default_path():
    text = _help("check")
    assert "PATH" in _option_help(text) and "default: the current folder" in _option_help(text)["PATH"]
    assert re.search(r"^  0 +no error-severity finding", text, re.M)
    assert re.search(r"^  1 +an error-severity finding", text, re.M)
    assert re.search(r"^  2 +usage error", text, re.M)
    assert "pyproject.toml" in text and "per-file-ignores" in text and "# pallas-lsp: noqa" in text
    assert "sarif: SARIF 2.1.0" in " ".join(text.split())


def test_trace_help_gives_the_timeout_and_its_default():
    said = _option_help(_help("trace"))
    assert "(default 120)" in said["--timeout SECONDS"]
    assert "exit status: 0" in " ".join(_help("trace").split())


def test_the_pre_commit_hook_takes_notebooks(tmp_path):
    (hook,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert hook["types_or"] == ["python", "jupyter"] and "types" not in hook  # `types` would narrow it to .py
    # pre-commit passes the staged files it selected to the entry: a notebook among them is checked.
    run = subprocess.run([sys.executable, "-m", "pallas_lsp", *hook["entry"].split()[1:], "--no-jedi",
                          str(REPO / "tests" / "notebooks" / "kernel.ipynb")], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300)
    assert run.returncode == 1 and ":cell 4:5:10: PAL001 " in run.stdout, run.stdout + run.stderr


def test_the_uncommitted_python_setting_warning_says_git_add_fixes_it(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run([*GIT, "init", "-q"], cwd=project, check=True)
    (project / "pyproject.toml").write_text('[tool.pallas-lsp]\npython = ".venv/bin/python"\n')
    (project / ".gitignore").write_text(".venv/\n")
    (project / "k.py").write_text(KERNEL)
    venv.create(project / ".venv", symlinks=True, with_pip=False)  # made here, not shipped
    run = cli("check", "-v", "--no-jedi", cwd=project)
    assert "the project's pyproject.toml is not tracked by git" in run.stderr
    assert "`git add pyproject.toml` fixes this" in run.stderr
    subprocess.run([*GIT, "add", "pyproject.toml"], cwd=project, check=True)  # what the warning says
    run = cli("check", "-v", "--no-jedi", cwd=project)
    assert "warning" not in run.stderr, run.stderr
    assert f"interpreter: {project / '.venv' / 'bin' / 'python'}" in run.stderr
    assert "from [tool.pallas-lsp] python)" in run.stderr
