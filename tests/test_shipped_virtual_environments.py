"""A repository cannot make pallas-lsp run a virtual environment it ships: one committed inside a
git submodule (the outer index lists only the submodule's commit, not its files), one reached
through a link into a submodule, one whose site-packages or pyvenv.cfg is committed while its bin/
is made here, one in a tree that is not a git checkout (a tarball), and none at all while git
cannot answer. Each attack uses real git repositories and a venv whose `.pth` file would write a
marker file the moment its Python starts."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import shutil
import textwrap
import venv
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import publish_for
from pallas_lsp.interpreters import refusal_of_project_choice

KERNEL = textwrap.dedent("""\
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu
    import jax.numpy as jnp


    def body(o_ref):
        buf = pl.get_global(plgpu.SMEM((128,), jnp.float32))
""")
GIT = ["git", "-c", "user.name=attacker", "-c", "user.email=attacker@example.com", "-c", "protocol.file.allow=always",
       "-c", "init.defaultBranch=main"]
RUNS = "(a .pth file in it would run when Python starts)"
ADVICE = ("A repository may only choose a Python of its own virtual environment; pass it with --python (or the "
          "editor's `python` setting) to use it anyway")


def git(*args, cwd) -> str:
    return subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def cli(*args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "pallas_lsp", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300, env=env)


def environment_that_marks_its_start(folder: Path, marker: Path) -> Path:
    """A real venv (bin/python links to this machine's Python) with a `.pth` that writes `marker`."""
    venv.create(folder, symlinks=True, with_pip=False)
    (site_packages,) = folder.glob("lib/python*/site-packages")
    (site_packages / "zz_marker.pth").write_text(f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\n")
    return folder


def starts_and_marks(python: Path, marker: Path) -> bool:
    """Whether starting `python` runs the environment's `.pth` (so a test that expects it not to run can fail)."""
    subprocess.run([str(python), "-c", "pass"], check=True, timeout=60)
    ran = marker.exists()
    marker.unlink(missing_ok=True)
    return ran


def warning(project: Path, python: str, reason: str) -> str:
    return (f"{project / 'pyproject.toml'}: [tool.pallas-lsp] python = {python!r} is not used: {reason}. {ADVICE}")


def project_repository(folder: Path, python: str) -> Path:
    folder.mkdir()
    git("init", "-q", cwd=folder)
    (folder / "pyproject.toml").write_text(f'[tool.pallas-lsp]\npython = "{python}"\n')
    (folder / "k.py").write_text(KERNEL)
    git("add", "pyproject.toml", "k.py", cwd=folder)
    git("commit", "-qm", "project", cwd=folder)
    return folder


def repository_shipping_a_venv(folder: Path, name: str, marker: Path) -> Path:
    folder.mkdir()
    git("init", "-q", cwd=folder)
    environment_that_marks_its_start(folder / name, marker)
    git("add", "-f", name, cwd=folder)
    git("commit", "-qm", "a venv", cwd=folder)
    return folder


def submodule_attack(tmp: Path, marker: Path, recurse: bool = True) -> Path:
    """The pull request: a submodule `vendor/tools` whose repository commits a whole venv, and a
    pyproject.toml choosing it. Returns the victim's clone (with submodules, as `--recurse-submodules`)."""
    tools = repository_shipping_a_venv(tmp / "tools", ".venv", marker)
    upstream = project_repository(tmp / "upstream", "vendor/tools/.venv")
    git("submodule", "add", "-q", str(tools), "vendor/tools", cwd=upstream)
    git("commit", "-qm", "add tools", cwd=upstream)
    victim = tmp / "victim"
    git("clone", "-q", *(["--recurse-submodules"] if recurse else []), str(upstream), str(victim), cwd=tmp)
    return victim


SUBMODULE_REASON = ("its virtual environment is inside the git submodule vendor/tools, whose files the repository "
                    f"ships {RUNS}")


def test_check_does_not_run_a_venv_committed_in_a_submodule(tmp_path):
    marker = tmp_path / "PTH_RAN"
    victim = submodule_attack(tmp_path, marker)
    assert git("ls-files", cwd=victim).split() == [".gitmodules", "k.py", "pyproject.toml", "vendor/tools"]
    assert (victim / "vendor" / "tools" / ".git").is_file()  # a gitfile into .git/modules
    assert starts_and_marks(victim / "vendor" / "tools" / ".venv" / "bin" / "python", marker)

    run = cli("check", "--format", "json", ".", cwd=victim)
    assert not marker.exists()
    assert run.stderr == f"pallas-lsp: warning: {warning(victim, 'vendor/tools/.venv', SUBMODULE_REASON)}\n"
    assert [(f["path"], f["code"]) for f in json.loads(run.stdout)] == [("k.py", "PAL001")]
    assert run.returncode == 1


SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "pallas_lsp", "serve"])


@pytest_lsp.fixture(config=SERVER)
async def submodule_attack_client(lsp_client: LanguageClient, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("attack")
    lsp_client.marker = tmp / "PTH_RAN"
    lsp_client.root = submodule_attack(tmp, lsp_client.marker)
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=lsp_client.root.as_uri(),
        initialization_options={"debounceMs": 0}))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_serve_does_not_run_a_venv_committed_in_a_submodule(submodule_attack_client: LanguageClient):
    client = submodule_attack_client
    assert starts_and_marks(client.root / "vendor" / "tools" / ".venv" / "bin" / "python", client.marker)
    uri = (client.root / "k.py").as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=KERNEL)))
    params = await publish_for(client, uri, 1, 60)
    assert [(d.code, d.range.start.line) for d in params.diagnostics] == [("PAL001", 6)]
    # A hover on `pl` goes to jedi, which waits for the folder's environment: by its answer the
    # chosen Python has been started if it ever will be.
    await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=6, character=10))), 120)
    assert not client.marker.exists()
    assert [(m.type, m.message) for m in client.messages] == [
        (types.MessageType.Warning, f"pallas-lsp: {warning(client.root, 'vendor/tools/.venv', SUBMODULE_REASON)}")]


def test_a_venv_in_a_nested_submodule_or_reached_through_a_link_is_refused(tmp_path):
    marker = tmp_path / "PTH_RAN"
    victim = submodule_attack(tmp_path, marker)
    deeper = repository_shipping_a_venv(tmp_path / "deeper", "env", marker)
    tools = victim / "vendor" / "tools"
    git("submodule", "add", "-q", str(deeper), "deeper", cwd=tools)
    assert refusal_of_project_choice(str(tools / "deeper" / "env"), str(victim)) == SUBMODULE_REASON

    (victim / "env").symlink_to("vendor/tools/.venv")  # a link made here, into the submodule
    assert refusal_of_project_choice(str(victim / "env"), str(victim)) == SUBMODULE_REASON
    (victim / "bin-only").mkdir()  # or only bin/ and pyvenv.cfg here, the rest linked from the submodule
    for entry in ("bin", "lib", "pyvenv.cfg"):
        (victim / "bin-only" / entry).symlink_to(tools / ".venv" / entry)
    assert refusal_of_project_choice(str(victim / "bin-only"), str(victim)) == SUBMODULE_REASON
    git("add", "env", cwd=victim)  # the repository's own link
    assert refusal_of_project_choice(str(victim / "env"), str(victim)) == \
        f"its virtual environment is committed to the repository {RUNS}"


def test_a_venv_made_in_a_submodule_not_yet_initialised_is_refused(tmp_path):
    victim = submodule_attack(tmp_path, tmp_path / "PTH_RAN", recurse=False)
    assert list((victim / "vendor" / "tools").iterdir()) == []  # the gitlink only: no .git there yet
    venv.create(victim / "vendor" / "tools" / ".venv", symlinks=True, with_pip=False)
    assert refusal_of_project_choice(str(victim / "vendor" / "tools" / ".venv"), str(victim)) == SUBMODULE_REASON


def test_a_venv_whose_site_packages_are_committed_but_bin_is_made_here_is_refused(tmp_path):
    """The repository ships `.venv/lib/.../site-packages` (plain files, or a submodule there) and a
    README says `python -m venv .venv`: the venv's bin/ is made here, its `.pth` is the repository's."""
    marker = tmp_path / "PTH_RAN"
    project = project_repository(tmp_path / "project", ".venv")
    environment_that_marks_its_start(project / ".venv", marker)
    (site_packages,) = (project / ".venv").glob("lib/python*/site-packages")
    git("add", "-f", str(site_packages / "zz_marker.pth"), cwd=project)
    committed = f"its virtual environment is committed to the repository {RUNS}"
    assert refusal_of_project_choice(str(project / ".venv"), str(project)) == committed

    git("rm", "-q", "--cached", str(site_packages / "zz_marker.pth"), cwd=project)
    packages = tmp_path / "packages"
    packages.mkdir()
    git("init", "-q", cwd=packages)
    (packages / "zz_marker.pth").write_text((site_packages / "zz_marker.pth").read_text())
    git("add", ".", cwd=packages)
    git("commit", "-qm", "site-packages", cwd=packages)
    (site_packages / "zz_marker.pth").unlink()
    site_packages.rmdir()
    git("submodule", "add", "-q", str(packages), str(site_packages.relative_to(project)), cwd=project)
    assert refusal_of_project_choice(str(project / ".venv"), str(project)) == committed

    run = cli("check", "--format", "json", ".", cwd=project)
    assert not marker.exists()
    assert run.stderr == f"pallas-lsp: warning: {warning(project, '.venv', committed)}\n"
    assert [(f["path"], f["code"]) for f in json.loads(run.stdout)] == [("k.py", "PAL001")]


def own_checkout_with_its_own_venv(tmp_path: Path, marker: Path) -> Path:
    """A git checkout whose pyproject.toml chooses a venv the user made here (untracked): honoured."""
    project = project_repository(tmp_path / "project", ".venv")
    environment_that_marks_its_start(project / ".venv", marker)
    assert refusal_of_project_choice(str(project / ".venv"), str(project)) is None
    return project


def test_the_users_own_venv_runs_in_a_checkout_and_in_a_worktree_whose_git_is_a_file(tmp_path):
    """The counterpart of every refusal here: a venv made on this machine is used, and its `.pth` runs."""
    marker = tmp_path / "PTH_RAN"
    project = own_checkout_with_its_own_venv(tmp_path, marker)
    run = cli("check", "--format", "json", ".", cwd=project)
    assert marker.exists() and run.stderr == "" and run.returncode == 1
    marker.unlink()

    worktree = tmp_path / "worktree"
    git("worktree", "add", "-q", str(worktree), cwd=project)
    assert (worktree / ".git").is_file()
    venv.create(worktree / ".venv", symlinks=True, with_pip=False)
    assert refusal_of_project_choice(str(worktree / ".venv"), str(worktree)) is None


def fake_git(folder: Path, script: str) -> dict:
    """An environment whose PATH finds `script` as git, and nothing else of git."""
    folder.mkdir()
    (folder / "git").write_text(f"#!/bin/sh\n{script}\n")
    (folder / "git").chmod(0o755)
    return {**os.environ, "PATH": str(folder)}


@pytest.mark.parametrize("script, timeout, reason", [
    (None, "10", "cannot run git: No such file or directory"),
    ("echo 'fatal: something broke' >&2; exit 128", "10", "git rev-parse: fatal: something broke"),
    (f"exec {shutil.which('sleep')} 1000", "2", "git did not answer within 2 s"),
], ids=["git-missing", "git-failing", "git-hanging"])
def test_without_an_answer_from_git_the_venv_is_not_run(tmp_path, script, timeout, reason):
    marker = tmp_path / "PTH_RAN"
    project = own_checkout_with_its_own_venv(tmp_path, marker)
    env = {**os.environ, "PATH": str(tmp_path / "empty"), "PALLAS_LSP_PROBE_TIMEOUT": timeout}
    if script is not None:
        env = {**fake_git(tmp_path / "fake", script), "PALLAS_LSP_PROBE_TIMEOUT": timeout}
    run = cli("check", "--format", "json", ".", cwd=project, env=env)
    assert not marker.exists()
    expected = f"git cannot tell whether the repository ships its virtual environment ({reason})"
    assert run.stderr == f"pallas-lsp: warning: {warning(project, '.venv', expected)}\n"
    assert [(f["path"], f["code"]) for f in json.loads(run.stdout)] == [("k.py", "PAL001")]


NOT_A_CHECKOUT = ("the project is not a git checkout, so nothing shows that its virtual environment was made on this "
                  f"machine rather than shipped with the project {RUNS}")


def test_a_tarball_s_venv_is_not_run_even_unpacked_in_a_folder_kept_in_git(tmp_path):
    """A release tarball carrying `.venv`: nothing in a plain tree tells it from one made here, so
    a repository-chosen venv is never used outside a git checkout; nor when the project's files
    are not the checkout's (a tarball unpacked in a home folder kept in git)."""
    marker = tmp_path / "PTH_RAN"
    release = tmp_path / "release"
    release.mkdir()
    (release / "pyproject.toml").write_text('[tool.pallas-lsp]\npython = ".venv"\n')
    (release / "k.py").write_text(KERNEL)
    environment_that_marks_its_start(release / ".venv", marker)
    subprocess.run(["tar", "-cf", "release.tar", "release"], cwd=tmp_path, check=True)
    unpacked = tmp_path / "unpacked"
    unpacked.mkdir()
    subprocess.run(["tar", "-xf", "../release.tar"], cwd=unpacked, check=True)
    project = unpacked / "release"
    assert starts_and_marks(project / ".venv" / "bin" / "python", marker)

    run = cli("check", "--format", "json", ".", cwd=project)
    assert not marker.exists()
    assert run.stderr == f"pallas-lsp: warning: {warning(project, '.venv', NOT_A_CHECKOUT)}\n"
    assert [(f["path"], f["code"]) for f in json.loads(run.stdout)] == [("k.py", "PAL001")]

    git("init", "-q", cwd=unpacked)  # the home folder is a git repository; the tarball is not in it
    (unpacked / ".bashrc").write_text("")
    git("add", ".bashrc", cwd=unpacked)
    assert refusal_of_project_choice(str(project / ".venv"), str(project)) == (
        "the project's pyproject.toml is not tracked by git, so nothing shows that its virtual environment was "
        f"made on this machine rather than shipped with the project {RUNS}; if the project is yours and "
        "pyproject.toml is only not added yet, `git add pyproject.toml` fixes this")
