"""A checked repository's own modules never run inside pallas-lsp: not in `check`'s worker processes,
not under `python -m pallas_lsp` run from the repository's folder (both put the working folder first
on `sys.path`, where a `struct.py` shadows the standard library)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
KERNEL = (REPO / "examples" / "kernels" / "pal001_global_buffer.py").read_text()
# Imported by multiprocessing's spawn start, by asyncio/ssl (the server's imports), by the analysis.
SHADOWS = ["struct", "pickle", "base64", "json", "ast", "tokenize", "ssl", "selectors", "multiprocessing"]
KERNELS = 10
pytestmark = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="check starts no workers on one CPU")


@pytest.fixture
def hostile_repository(tmp_path: Path) -> Path:
    for n in range(KERNELS):
        (tmp_path / f"kernel_{n}.py").write_text(KERNEL)
    for name in SHADOWS:
        (tmp_path / f"{name}.py").write_text(
            "import os\n"
            f"open(os.path.join({str(tmp_path)!r}, 'IMPORTED-{name}'), 'a').close()\n")
    return tmp_path


def _check(command: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO / "server"), "PALLAS_LSP_CHECK_WORKERS": "1"}  # a worker even for little work
    env.pop("PYTHONSAFEPATH", None)
    return subprocess.run([*command, "check", "--verbose", "--no-jedi", "--jobs", "2", "."], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def _assert_checked_and_nothing_imported(run: subprocess.CompletedProcess, folder: Path) -> None:
    imported = sorted(p.name for p in folder.glob("IMPORTED-*"))
    assert imported == [], run.stderr[-2000:]
    assert run.returncode == 1, run.stdout + run.stderr
    assert "pallas-lsp: debug: 1 worker processes started for" in run.stderr  # the workers were tested
    findings = [line for line in run.stdout.splitlines() if ": PAL001 " in line]
    assert sorted(line.split(":")[0] for line in findings) == sorted(f"kernel_{n}.py" for n in range(KERNELS))


def test_check_workers_never_import_the_repositorys_modules(hostile_repository: Path) -> None:
    script = shutil.which("pallas-lsp", path=str(Path(sys.executable).parent))
    assert script, "pallas-lsp's console script next to the test interpreter"
    _assert_checked_and_nothing_imported(_check([script], hostile_repository), hostile_repository)


def test_python_m_pallas_lsp_in_the_repositorys_folder_never_imports_its_modules(hostile_repository: Path) -> None:
    _assert_checked_and_nothing_imported(_check([sys.executable, "-m", "pallas_lsp"], hostile_repository),
                                         hostile_repository)
