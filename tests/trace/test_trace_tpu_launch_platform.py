"""`check --trace` lowers a TPU kernel for a TPU even when its launch says nothing of the backend (only
its body uses pltpu), and where JAX must know which TPU it traces for (`emit_pipeline`, a TensorCore
mesh) with none attached, it traces under an abstract TPU as `tests/jax_truth.py` does: JAX accepts
both agreement fixtures, so `check --trace` must report nothing on them."""

import json
import shutil
import subprocess
import sys

import pytest

from conftest import FIXTURES, jax_python

pytestmark = pytest.mark.jax

FIXTURES_USED = ("good_tpu_emit_pipeline_bare_pallas_call.py", "good_tpu_run_scoped_dma_bare_pallas_call.py")


@pytest.mark.parametrize("name", FIXTURES_USED)
def test_a_tpu_kernel_jax_lowers_is_no_trace_finding(tmp_path, name):
    shutil.copy(FIXTURES / "agreement" / name, tmp_path / name)
    run = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--trace", "--format", "json",
                          "--python", jax_python(), name], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert (run.returncode, json.loads(run.stdout)) == (0, []), run.stdout + run.stderr
    assert "1 entry point (1 ok); 1 launch reached, 0 rejected by JAX" in run.stderr, run.stderr
