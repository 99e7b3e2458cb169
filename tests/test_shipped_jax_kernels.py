"""The Pallas kernels shipped inside jax are correct: checking them reports nothing."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import jax_python

pytestmark = pytest.mark.jax


def test_jax_pallas_ops_have_no_findings():
    python = jax_python()
    ops = subprocess.run([python, "-c", "import jax, os; print(os.path.dirname(jax.__file__))"],
                         capture_output=True, text=True, check=True).stdout.strip()
    ops_dir = Path(ops) / "experimental" / "pallas" / "ops"
    files = sorted(ops_dir.rglob("*.py"))
    assert any(f.name == "collective_matmul_mgpu.py" for f in files)  # uses get_global(REGULAR)
    run = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--format", "json", "--python", python, str(ops_dir)],
                         capture_output=True, text=True, timeout=600)
    assert (run.returncode, json.loads(run.stdout)) == (0, []), run.stderr[-2000:]
