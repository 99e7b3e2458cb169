"""Installing pallas-lsp in your own project: the wheel builds, installs into a fresh virtual
environment of each supported Python found on this machine, and runs there (`pallas-lsp check` on an
example, with its rule pages shipped inside the package); and the pre-commit hook this repository
declares runs as pre-commit runs it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from conftest import REPO

pytestmark = pytest.mark.slow
PYTHONS = ["3.10", "3.11", "3.12", "3.13", "3.14"]  # pyproject.toml: requires-python >= 3.10
EXAMPLE = REPO / "examples" / "kernels" / "pal001_global_buffer.py"
RULE_PAGES = sorted(p.name for p in (REPO / "docs" / "rules").glob("*.md"))


def find_python(version: str) -> str | None:
    candidates = [shutil.which(f"python{version}")]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates += sorted(str(p / "bin" / "python3") for p in pyenv.glob(f"{version}.*"))
    for candidate in filter(None, candidates):
        probe = subprocess.run([candidate, "-c", "import sys, venv; print('%d.%d' % sys.version_info[:2])"],
                               capture_output=True, text=True)
        if probe.returncode == 0 and probe.stdout.strip() == version:
            return candidate
    return None


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """Built as `pip wheel .` builds it (isolated build, setuptools from the package index)."""
    out = tmp_path_factory.mktemp("wheel")
    source = tmp_path_factory.mktemp("source") / "pallas-lsp"
    # A copy of the tracked files: the build writes build/ and *.egg-info, not into this checkout.
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(out), str(source)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    (found,) = out.glob("pallas_lsp-*.whl")
    return found


def test_the_wheel_carries_every_rule_page_and_the_license(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert sorted(n.split("/")[-1] for n in names if n.startswith("pallas_lsp/rule_docs/")) == RULE_PAGES
    (license_file,) = [n for n in names if re.fullmatch(r"pallas_lsp-[^/]+\.dist-info/(licenses/)?LICENSE", n)]
    assert zipfile.ZipFile(wheel).read(license_file) == (REPO / "LICENSE").read_bytes()


@pytest.mark.timeout(900)
@pytest.mark.parametrize("version", PYTHONS)
def test_the_wheel_installs_and_runs_in_a_fresh_venv(wheel, version, tmp_path):
    python = find_python(version)
    if python is None:
        pytest.skip(f"no Python {version} on this machine")
    venv = tmp_path / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    installed = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)],
                               capture_output=True, text=True, timeout=600, env=env)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    tool = str(venv / "bin" / "pallas-lsp")
    version_line = subprocess.run([tool, "--version"], capture_output=True, text=True, env=env, timeout=60)
    assert version_line.stdout.startswith("pallas-lsp "), version_line.stderr
    # No jax in this environment: names are resolved from the import statements; PAL001 all the same.
    check = subprocess.run([tool, "check", "--format", "json", str(EXAMPLE)], capture_output=True, text=True,
                           env=env, timeout=300, cwd=tmp_path)
    assert check.returncode == 1, check.stderr
    (finding,) = json.loads(check.stdout)
    assert (finding["code"], finding["line"]) == ("PAL001", 28), finding
    page = subprocess.run([str(venv / "bin" / "python"), "-c",
                           "from pallas_lsp.rules import RULES_BY_CODE, doc_url; print(doc_url(RULES_BY_CODE['PAL001']))"],
                          capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path)
    assert page.stdout.strip().startswith((venv / "lib").as_uri()), page.stdout + page.stderr  # inside the venv
    assert page.stdout.strip().endswith("/pallas_lsp/rule_docs/PAL001-get-global-not-semaphore.md")
    # The trace runner, started from the installed package under an interpreter with no jax, loads the
    # modules beside it (a missing one fails before it can say that jax is missing).
    traced = subprocess.run([tool, "trace", f"{EXAMPLE}::scale", "--python", str(venv / "bin" / "python")],
                            capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    no_jax = "cannot run the trace: ModuleNotFoundError: No module named 'jax'"
    assert traced.returncode == 2 and no_jax in traced.stdout, traced.stdout + traced.stderr
    printed = subprocess.run([tool, "rule", "PAL001"], capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path)
    assert printed.stdout == (REPO / "docs" / "rules" / "PAL001-get-global-not-semaphore.md").read_text(), printed.stderr

    # The pre-commit hook, run as pre-commit runs it: its entry, then the staged files.
    (hook,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert (hook["id"], hook["language"], hook["types_or"]) == ("pallas-lsp", "python", ["python", "jupyter"])
    hooked = subprocess.run([*hook["entry"].split(), str(EXAMPLE), str(REPO / "examples" / "kernels" / "good_semaphore_ordering.py")],
                            capture_output=True, text=True, timeout=300, cwd=tmp_path,
                            env={**env, "PATH": f"{venv / 'bin'}{os.pathsep}{env['PATH']}"})
    assert hooked.returncode == 1 and hooked.stdout.count(": PAL001 ") == 1, hooked.stdout + hooked.stderr
