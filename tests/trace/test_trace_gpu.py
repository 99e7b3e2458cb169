"""On a machine with a GPU: the trace also compiles (docs/gpu-trace.md has a recorded run on an H200).

Skips cleanly where the analysed interpreter's jax sees no GPU (CI, laptops).
"""

import subprocess

import pytest

from conftest import FIXTURES, jax_python
from pallas_lsp.trace import trace_target
from pallas_lsp.trace.worker import WorkerPool

pytestmark = pytest.mark.jax

TRACE = FIXTURES / "trace"


@pytest.fixture(scope="module")
def gpu_pool():
    probe = subprocess.run([jax_python(), "-c", "import jax; assert jax.devices('gpu')"],
                           capture_output=True, text=True, timeout=300)
    if probe.returncode != 0:
        pytest.skip("no GPU: jax.devices('gpu') fails in the analysed interpreter")
    pool = WorkerPool()
    yield pool
    pool.shutdown()


def test_good_kernel_lowers_and_compiles_on_the_gpu(gpu_pool):
    result = trace_target(gpu_pool, jax_python(), str(TRACE), str(TRACE / "kernels.py"), "add_one")
    assert (result["ok"], result["compiled"], result["gpu"]) == (True, True, True), result["error"]
    assert "compile" in result["timings"]
    assert [(k["smem_bytes"], k["barriers"], k["gmem_semaphores"]) for k in result["kernels"]] == [(66560, 1, 1)]


def test_bad_kernel_fails_before_compiling_on_the_get_global_line(gpu_pool):
    result = trace_target(gpu_pool, jax_python(), str(TRACE), str(TRACE / "bad_kernels.py"), "smem_global")
    assert (result["ok"], result["compiled"], result["stage"]) == (False, False, "lower")
    assert result["error"]["message"] == "get_global only supports semaphores, got Ref<smem>{float32[128]}"
    assert [loc["line"] for loc in result["error"]["locations"]] == [19]
