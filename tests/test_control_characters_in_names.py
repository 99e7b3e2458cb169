"""File names with terminal control characters never reach the terminal raw: a kernel named
`\\x1b[2K\\rAll checks passed!\\n...` printed bare erased "Found 2 errors" and wrote "All checks
passed!" over it. Text findings, warnings (skipped, not rewritten, fix not applied), `-v` logs and
`trace` headers print such a name quoted as git quotes it; JSON keeps the name (JSON escapes it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO, jax_python

KERNEL = REPO / "tests" / "fixes" / "golden" / "scratch_list_plgpu_smem" / "before.py"
# ESC (CSI "erase line"), CR, the fake summary, a newline, BEL and U+009B (C1 CSI).
NAME = "\x1b[2K\rAll checks passed!\n\x07\x9b.py"
QUOTED = '"\\033[2K\\rAll checks passed!\\n\\a\\302\\233.py"'
# An OSC 8 hyperlink opener; too large to analyse, so it is named in a "skipped" warning.
BIG = "\x1b]8;;file:x\x07big\x9b.py"
BIG_QUOTED = '"\\033]8;;file:x\\abig\\302\\233.py"'
# A raw 0x9b byte (no UTF-8: Python holds it as a lone surrogate) and an SGR colour.
RAW = b"raw\x9b\x1b[31m.py"
RAW_QUOTED = '"raw\\233\\033[31m.py"'
FINDING = ':11:10: PAL001 JAX: "get_global only supports semaphores, got Ref<smem>{float32[128]}"'


def unsafe(data: bytes) -> list[str]:
    """Characters a terminal would act on: C0 but newline and tab, DEL, C1, undecodable bytes."""
    text = data.decode("utf-8", "surrogateescape")
    return [c for c in text if (c < " " and c not in "\n\t") or "\x7f" <= c <= "\x9f" or "\ud800" <= c <= "\udfff"]


@pytest.fixture
def folder(tmp_path):
    source = KERNEL.read_text() + '\n\ndef f(x):\n    raise ValueError("bad")\n'
    (tmp_path / NAME).write_text(source)
    with open(os.path.join(os.fsencode(tmp_path), RAW), "w") as file:
        file.write(source)
    with open(tmp_path / BIG, "wb") as file:
        file.truncate(6_000_000)  # over the 5 MB limit for analysed files
    return tmp_path


def pallas_lsp(*args, cwd) -> subprocess.CompletedProcess:
    run = subprocess.run([sys.executable, "-m", "pallas_lsp", *args], capture_output=True, cwd=cwd, timeout=300)
    assert unsafe(run.stdout) == [] and unsafe(run.stderr) == [], (run.stdout, run.stderr)
    return run


def test_text_output_quotes_names_and_the_fake_summary_never_shows(folder):
    run = pallas_lsp("check", "--python", jax_python(), ".", cwd=folder)
    assert run.returncode == 1
    lines = run.stdout.decode().splitlines()
    assert sorted(line.split(FINDING)[0] for line in lines[:-1]) == sorted([QUOTED, RAW_QUOTED])
    assert lines[-1] == "Found 2 errors."
    assert run.stderr.decode() == (f"pallas-lsp: warning: {BIG_QUOTED}: skipped: 6,000,000 bytes, over the 5 MB "
                                   "limit for analysed files\n")
    missing = pallas_lsp("check", "--python", jax_python(), NAME + "x", cwd=folder)
    assert missing.stderr.decode() == f"pallas-lsp: error: no such file or folder: {QUOTED[:-1]}x\"\n"
    as_json = pallas_lsp("check", "--python", jax_python(), "--format", "json", NAME, cwd=folder)
    assert [finding["path"] for finding in json.loads(as_json.stdout)] == [NAME]  # JSON escapes it itself


def test_fix_warnings_and_verbose_logs_quote_names(folder):
    for name in (NAME, RAW.decode("utf-8", "surrogateescape")):
        os.chmod(folder / name, 0o444)
    run = pallas_lsp("check", "-v", "--fix", "--python", jax_python(), ".", cwd=folder)
    err = run.stderr.decode()
    for quoted in (QUOTED, RAW_QUOTED):
        assert f"pallas-lsp: warning: {quoted} not rewritten: it is read-only\n" in err
        assert f"pallas-lsp: warning: fix not applied: {quoted}:11:10: PAL001 Allocate tile as scratch" in err
    assert "pallas-lsp: debug: " in err and run.returncode == 1


def test_trace_header_and_locations_quote_the_name(folder):
    run = pallas_lsp("trace", "--python", jax_python(), f"{NAME}::f", "--args", "f32[8]", cwd=folder)
    lines = run.stdout.decode().splitlines()
    assert lines[0] == f"trace {QUOTED}::f(f32[8])  [arguments from --args]"
    assert lines[-2:] == ["FAILED (trace): ValueError: bad", f"  {QUOTED}:29"]
    assert run.returncode == 1
