"""A fix costs memory in proportion to the file, not to a line's tokens times its length: a kernel file
that also holds one long line of data (`DATA = [1, 1, ...]`, 60 KB, 40,000 tokens) is fixed by the real
`pallas-lsp check --diff` and the real server's code action, and the process's peak resident set is
read. Each process runs under an address-space limit, so a blow-up fails fast instead of taking the
machine's memory (before: 1.1 GB for a 41 KB line, 2.4 GB for this one)."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO, jax_python, limit_address_space, run_with_peak
from lsp_wire import WireServer

KERNEL = (REPO / "examples" / "kernels" / "pal001_global_buffer.py").read_text()
DATA = "DATA = [" + ", ".join(["1"] * 20_000) + "]\n"
PEAK_MIB = 300  # the same fix without the long line: ~70 MiB
NEW_PARAMETER = "+def scale_rows(x_ref, o_ref, staging_ref):"
SCRATCH_FIX = "pallas-lsp (PAL001): Allocate staging as scratch (scratch_types)"


def test_check_diff_of_a_file_with_a_long_line_stays_small(tmp_path):
    (tmp_path / "kernel.py").write_text(KERNEL + "\n" + DATA)
    code, stdout, stderr, peak_mib = run_with_peak(
        [sys.executable, "-m", "pallas_lsp", "check", "--diff", "--python", jax_python(), "kernel.py"], tmp_path)
    assert code == 1, stderr[-3000:]
    assert NEW_PARAMETER in stdout.splitlines(), stdout[-3000:]
    assert peak_mib < PEAK_MIB, f"check --diff peaked at {peak_mib:.0f} MiB"


def test_code_action_on_a_file_with_a_long_line_stays_small(tmp_path):
    path = tmp_path / "kernel.py"
    text = KERNEL + "\n" + DATA
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
            peak_mib = int(next(line.split()[1] for line in status if line.startswith("VmHWM:"))) / 1024
        assert peak_mib < PEAK_MIB, f"the server peaked at {peak_mib:.0f} MiB"
    finally:
        server.kill()
