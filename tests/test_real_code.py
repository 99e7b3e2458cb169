"""Real Pallas code as the measuring stick: a pinned PyPI package with Pallas kernels is checked and every finding
must be one `bench/real_code.py` lists as expected (with why; none for this package). tokamax 0.0.17 is the
sample: 627 files, among them a decode kernel whose scalar prefetch and six DMA semaphore arrays in scratch were
once mapped to the wrong body parameters (12 false PAL005). Downloads it from PyPI (2.8 MB, once per run); and jax's
own wheel, checked in its Pallas folders."""

import json
import subprocess
import sys

import pytest

from conftest import REPO, jax_python

pytestmark = [pytest.mark.slow, pytest.mark.jax]


def checked(tmp_path, package: str) -> dict:
    """bench/real_code.py on one pinned package: its one result, after asserting nothing unexpected was found."""
    out = tmp_path / "results.json"
    run = subprocess.run([sys.executable, str(REPO / "bench" / "real_code.py"), "--packages", package,
                          "--cache", str(tmp_path / "cache"), "--python", jax_python(), "--json", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert out.exists(), run.stderr[-3000:]
    results = json.loads(out.read_text())
    assert results["failures"] == [], run.stdout
    assert run.returncode == 0, run.stderr[-3000:]
    (result,) = results["results"]
    return result


def test_pinned_package_has_no_finding_jax_contradicts(tmp_path):
    package = checked(tmp_path, "tokamax")
    assert package["package"] == "tokamax==0.0.17"
    assert package["files"] > 600  # the whole package was unpacked and checked
    assert package["cpu_s"] > 0 and package["peak_mib"] > 0


def test_jax_wheel_is_checked_in_its_pallas_folders_only(tmp_path):
    """jax's released Pallas code (its API with the ops it ships, and jax/_src/pallas), not the rest of jax."""
    package = checked(tmp_path, "jax")
    assert package["package"] == "jax==0.12.0.1"
    ops = tmp_path / "cache" / "src" / "jax-0.12.0.1" / "jax" / "experimental" / "pallas" / "ops"
    assert any(ops.rglob("*.py"))  # the kernels it ships are among the files checked
    assert 50 < package["files"] < 300  # jax/experimental/pallas and jax/_src/pallas, not all of jax's 1,000+
