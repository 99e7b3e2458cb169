"""Other tools' settings that fixes read (the line length of `[tool.ruff]`, else `[tool.black]`): a value
neither tool would take is passed over with one warning per run naming the file and key, and the fix
is still made, wrapped at the default 88 columns. Before: `[tool] ruff = "strict"` was a traceback and
no fix; `line-length = true` (an int to Python) broke every fixed line at one column."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

KERNEL = Path(__file__).resolve().parents[1] / "examples" / "kernels" / "pal001_global_buffer.py"
WHY = "a line length is a whole number from 1 to 320"


def diff(folder: Path, pyproject: str | None):
    """`check --diff` of a project of two kernels whose fixes lengthen lines past 88 columns."""
    folder.mkdir()
    shutil.copy(KERNEL, folder / "k.py")
    shutil.copy(KERNEL, folder / "k2.py")
    if pyproject is not None:
        (folder / "pyproject.toml").write_text(pyproject)
    return subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--no-jedi", "--diff", "."],
                          capture_output=True, text=True, cwd=folder, timeout=300)


@pytest.mark.parametrize("pyproject, warning", [
    ('[tool]\nruff = "strict"\n', "[tool] ruff = 'strict' is ignored: it must be a table"),
    ("[tool.ruff]\nline-length = true\n", f"[tool.ruff] line-length = true is ignored: {WHY}"),
    ("[tool.black]\nline-length = true\n", f"[tool.black] line-length = true is ignored: {WHY}"),
    ("[tool.black]\nline-length = -5\n", f"[tool.black] line-length = -5 is ignored: {WHY}"),
    ("[tool.black]\nline-length = 0\n", f"[tool.black] line-length = 0 is ignored: {WHY}"),
    (f"[tool.ruff]\nline-length = {10 ** 30}\n", f"[tool.ruff] line-length = {10 ** 30} is ignored: {WHY}"),
    ('[tool.ruff]\nline-length = "88"\n', f"[tool.ruff] line-length = '88' is ignored: {WHY}"),
    ("[tool.ruff]\nline-length = nan\n", f"[tool.ruff] line-length = nan is ignored: {WHY}"),
    ("[tool.black]\nline-length = 1.5\n", f"[tool.black] line-length = 1.5 is ignored: {WHY}"),
    ('[tool.ruff.format]\nindent-width = "x"\nquote-style = 5\n', None),  # not read: the file's own style is used
], ids=["ruff-string", "ruff-true", "black-true", "negative", "zero", "10**30", "string", "nan", "float",
        "format-settings"])
def test_odd_line_lengths_are_ignored_with_one_warning_and_the_fix_is_made(tmp_path, pyproject, warning):
    expected = diff(tmp_path / "plain", None)
    assert expected.returncode == 1 and "scratch_types=[plgpu.SMEM" in expected.stdout
    run = diff(tmp_path / "odd", pyproject)
    assert "Traceback" not in run.stderr
    assert run.stdout == expected.stdout  # wrapped at 88, as without the setting
    warnings = [line for line in run.stderr.splitlines() if line.startswith("pallas-lsp: warning:")]
    path = tmp_path / "odd" / "pyproject.toml"
    assert warnings == ([f"pallas-lsp: warning: {path}: {warning}"] if warning else [])
    assert run.returncode == 1


def test_a_bad_ruff_line_length_leaves_blacks(tmp_path):
    narrow = diff(tmp_path / "black", "[tool.black]\nline-length = 40\n")
    run = diff(tmp_path / "both", "[tool.ruff]\nline-length = false\n[tool.black]\nline-length = 40\n")
    assert run.stdout == narrow.stdout != diff(tmp_path / "plain", None).stdout
    assert f"[tool.ruff] line-length = false is ignored: {WHY}" in run.stderr
