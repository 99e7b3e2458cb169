"""A fix costs memory in proportion to the file, not to a line's tokens times its length: a kernel file
that also holds one long line of data (`DATA = [1, 1, ...]`, 60 KB, 40,000 tokens) is fixed by the real
`pallas-lsp check --diff` and the real server's code action, and the process's peak resident set is
read. Each process runs under an address-space limit, so a blow-up fails fast instead of taking the
machine's memory (before: 1.1 GB for a 41 KB line, 2.4 GB for this one). A line of 100,000 numbers is
no syntax tree of 100,000 nodes either: the analysis does not read such a literal's values."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO, jax_python, limit_address_space, run_with_peak
from lsp_wire import WireServer

KERNEL = (REPO / "examples" / "kernels" / "pal001_global_buffer.py").read_text()
DATA = "DATA = [" + ", ".join(["1"] * 20_000) + "]\n"
PEAK_MIB = 300  # the same fix without the long line: ~70 MiB
# 300 KB of numbers: 100,000 syntax-tree nodes (~450 bytes each) were it parsed as it is; the analysis
# elides it (`analysis/big_literals.py`). Before: `check --diff` 186 MiB.
NUMBERS = "DATA = [" + ", ".join(["1"] * 100_000) + "]\n"
NUMBERS_PEAK_MIB = 120
NEW_PARAMETER = "+def scale_rows(x_ref, o_ref, staging_ref):"
SCRATCH_FIX = "pallas-lsp (PAL001): Allocate staging as scratch (scratch_types)"


def test_check_diff_of_a_file_with_a_long_line_stays_small(tmp_path):
    assert _check_diff_peak(tmp_path, DATA) < PEAK_MIB


def test_code_action_on_a_file_with_a_long_line_stays_small(tmp_path):
    assert _code_action_peak(tmp_path, DATA) < PEAK_MIB


def test_check_diff_of_a_file_with_a_long_line_of_numbers_stays_small(tmp_path):
    assert _check_diff_peak(tmp_path, NUMBERS) < NUMBERS_PEAK_MIB


def test_code_action_on_a_file_with_a_long_line_of_numbers_stays_small(tmp_path):
    assert _code_action_peak(tmp_path, NUMBERS) < NUMBERS_PEAK_MIB


def _check_diff_peak(tmp_path, data: str) -> float:
    """The real `check --diff`'s peak resident set (MiB) on the kernel file followed by `data`; it prints the fix."""
    (tmp_path / "kernel.py").write_text(KERNEL + "\n" + data)
    code, stdout, stderr, peak_mib = run_with_peak(
        [sys.executable, "-m", "pallas_lsp", "check", "--diff", "--python", jax_python(), "kernel.py"], tmp_path)
    assert code == 1, stderr[-3000:]
    assert NEW_PARAMETER in stdout.splitlines(), stdout[-3000:]
    return peak_mib


def _code_action_peak(tmp_path, data: str) -> float:
    """The real server's peak resident set (MiB) once it offered the fix as a code action (same file)."""
    path = tmp_path / "kernel.py"
    text = KERNEL + "\n" + data
    path.write_text(text)
    process = subprocess.Popen([sys.executable, "-m", "pallas_lsp", "serve"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                               preexec_fn=limit_address_space)
    server = WireServer(process=process)
    try:
        server.initialize(str(tmp_path), python=jax_python())
        uri = path.as_uri()
        server.open(uri, text)
        (diagnostic,) = server.published(uri)
        assert diagnostic["code"] == "PAL001"
        actions = server.request(1, "textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": diagnostic["range"], "context": {"diagnostics": [diagnostic]}})
        assert actions is not None, server.stderr.decode(errors="replace")[-3000:]
        titles = [action["title"] for action in actions["result"]]
        assert SCRATCH_FIX in titles, (titles, server.stderr.decode(errors="replace")[-3000:])
        with open(f"/proc/{process.pid}/status") as status:
            return int(next(line.split()[1] for line in status if line.startswith("VmHWM:"))) / 1024
    finally:
        server.kill()
