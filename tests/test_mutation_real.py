"""Mutation testing on real kernels, a pinned sample: bugs planted one at a time in jax's own Pallas tests (at the
commit bench/mutation_real.py pins), JAX's verdict (each test method run through the trace machinery, its launches
lowered by real JAX 0.12) against `pallas-lsp check`'s. Fails on any disagreement.

The corpus comes from $PALLAS_LSP_JAX_GIT_DIR (a jax git dir at that commit) or GitHub (3 files); the environment
is .venvs/jax with absl-py from PyPI beside it. The test is skipped when either cannot be had."""

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO, jax_python

pytestmark = [pytest.mark.slow, pytest.mark.jax]

# Kernels the sample plants bugs in: a Mosaic GPU kernel with a grid and one global semaphore (a second one lowers),
# a gridless one (a second one overflows JAX's reservation), both launched through the test case's `self.kernel`
# (an alias of plgpu.kernel bound in the else of `if TYPE_CHECKING:`), and a TPU kernel that copies with a DMA
# semaphore from pl.run_scoped, launched through jax's own test helper (`self.pallas_call`). And the kernels of the
# misses fixed for issue #39: a Mosaic GPU kernel launched through mosaic_gpu_test.py's `self.pallas_call` (which
# builds the kernel around the body, in plgpu.emit_pipeline), a TPU copy's semaphore chosen by pl.select_ref, a
# TPU pl.semaphore_read of a run_scoped semaphore array, and a Mosaic GPU run_scoped semaphore (BARRIER planted).
METHODS = [
    "mosaic_gpu_test.py::SemaphoreTest.test_global_semaphore",
    "mosaic_gpu_test.py::SemaphoreTest.test_global_semaphore_with_multiple_warps",
    "tpu_pallas_test.py::PallasCallDMATest.test_hbm_vmem_dma",
    "mosaic_gpu_test.py::PallasCallTest.test_add_one_grid_pipelined",
    "tpu_pallas_test.py::PallasCallDMATest.test_select_ref",
    "tpu_pallas_test.py::PallasCallDMATest.test_can_read_semaphore",
    "mosaic_gpu_test.py::SemaphoreTest.test_multiple_semaphore_scopes",
]
KINDS = ["sem_type_swapped", "second_get_global", "interpret_on", "get_global_not_semaphore", "scratch_grown",
         "dma_sem_signalled", "at_index_dropped", "sem_read_not_viewed"]


def test_pinned_mutants_of_real_kernels_get_jaxs_verdict(tmp_path):
    out = tmp_path / "mutants.json"
    command = [sys.executable, str(REPO / "bench" / "mutation_real.py"), "--cache", str(tmp_path / "cache"),
               "--methods", ",".join(METHODS), "--kinds", ",".join(KINDS), "--json", str(out)]
    if os.environ.get("PALLAS_LSP_JAX_GIT_DIR"):
        command += ["--jax-git-dir", os.environ["PALLAS_LSP_JAX_GIT_DIR"]]
    run = subprocess.run(command, capture_output=True, text=True, timeout=1200,
                         env={**os.environ, "PYTHONPATH": str(REPO / "server"), "PALLAS_LSP_JAX_PYTHON": jax_python()})
    if run.returncode == 3:
        pytest.skip(f"corpus or environment unavailable: {run.stderr.strip()[-300:]}")
    assert out.exists(), run.stderr[-3000:]
    results = json.loads(out.read_text())
    assert results["skipped"] == {}, results["skipped"]  # JAX accepts every unmutated kernel of the sample
    disagreements = [m for m in results["mutants"] if m["static"]["reject"] != (m["jax"]["verdict"] == "reject")]
    assert disagreements == [], run.stdout
    assert run.returncode == 0, run.stdout + run.stderr[-2000:]
    kinds = results["summary"]
    assert set(kinds) == set(KINDS)
    # Both verdicts occur: the sample is no list of mutants JAX always rejects.
    assert kinds["second_get_global"]["jax_rejects"] == 1 and kinds["second_get_global"]["mutants"] == 3
    assert all(t["right_line"] == t["jax_rejects"] for t in kinds.values()), kinds
