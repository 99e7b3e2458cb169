"""Real Pallas code as the measuring stick: a pinned PyPI package with Pallas kernels is checked and every finding
must be one `bench/real_code.py` lists as expected (with why; none for this package). tokamax 0.0.17 is the
sample: 627 files, among them a decode kernel whose scalar prefetch and six DMA semaphore arrays in scratch were
once mapped to the wrong body parameters (12 false PAL005). Downloads it from PyPI (2.8 MB, once per run)."""

import json
import subprocess
import sys

import pytest

from conftest import REPO, jax_python

pytestmark = [pytest.mark.slow, pytest.mark.jax]


def test_pinned_package_has_no_finding_jax_contradicts(tmp_path):
    out = tmp_path / "results.json"
    run = subprocess.run([sys.executable, str(REPO / "bench" / "real_code.py"), "--packages", "tokamax",
                          "--cache", str(tmp_path / "cache"), "--python", jax_python(), "--json", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert out.exists(), run.stderr[-3000:]
    results = json.loads(out.read_text())
    assert results["failures"] == [], run.stdout
    assert run.returncode == 0, run.stderr[-3000:]
    (package,) = results["results"]
    assert package["package"] == "tokamax==0.0.17"
    assert package["files"] > 600  # the whole package was unpacked and checked
    assert package["cpu_s"] > 0 and package["peak_mib"] > 0
