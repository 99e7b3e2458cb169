"""Entry points whose own host code asks which TPU it runs on before it launches (`pltpu.get_tpu_info()`,
`pltpu.create_tensorcore_mesh()`, `pltpu.TensorCoreMesh(...)`), as tokamax's and qwix's kernels do: with
no TPU here JAX raises before the launch; in a trace the abstract chip (tracing.AbstractChip, TPU v5
lite) answers, so the launch is reached and lowered, with JAX's own types, said to be an abstract chip's."""

import json
import subprocess

import pytest

from conftest import FIXTURES, jax_python
from pallas_lsp.trace.entry_points import run_entry_points
from pallas_lsp.trace.worker import WorkerPool

pytestmark = pytest.mark.jax

FIXTURE = FIXTURES / "trace" / "tpu_chip_sized.py"
TESTS = ("test_scaled", "test_copied", "test_copied_on_mesh", "test_copied_from_hbm")


def jax_avals() -> dict:
    """JAX's truth: (body's first line, parameter) -> avals, under an abstract `TPU v6 lite` mesh, as the
    real-library bench builds it (tests/jax_kernel_types.py)."""
    run = subprocess.run([jax_python(), str(FIXTURE.parents[2] / "jax_kernel_types.py"), "--abstract-tpu",
                          "TPU v6 lite", str(FIXTURE)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    found = json.loads(run.stdout)
    # under the abstract mesh everything answers for the TPU, `is_tpu_device()` too: only that test fails there
    assert [e.split("::")[-1] for e in found["errors"]] == ["test_is_tpu_device_tells_the_truth"], found["errors"]
    return {(int(line), name): avals for bodies in found["types"].values() for line, params in bodies.items()
            for name, avals in params.items()}


def test_without_a_tpu_jax_raises_before_the_launch():
    for test in TESTS:
        run = subprocess.run([jax_python(), "-c", f"import tpu_chip_sized as m; m.{test}()"], capture_output=True,
                             text=True, timeout=300, cwd=FIXTURE.parent)
        assert run.returncode != 0, f"{test} ran: this machine has a TPU, or JAX no longer asks it"


def test_entries_asking_the_chip_reach_their_launches_with_jaxs_types():
    pool = WorkerPool()
    try:
        run = run_entry_points(pool, jax_python(), str(FIXTURE.parent), [str(FIXTURE)], relevant=lambda p, t: True)
    finally:
        pool.shutdown()
    outcomes = {result.entry.id.split("::")[-1]: result for result in run.results}
    assert {name: outcomes[name].outcome for name in TESTS} == {name: "ok" for name in TESTS}, run.summary()
    for name in TESTS:
        [launch] = outcomes[name].launches
        assert launch["verdict"] == "ok" and launch["platform"] == "tpu", launch
        assert launch["abstract_device"] == "TPU v5 lite", launch  # the types are the abstract chip's
    assert outcomes["test_is_tpu_device_tells_the_truth"].outcome == "ok"  # which TPU is answered, not whether
    traced = {key: avals for refs in run.traced_refs().values() for key, avals in refs.items()}
    truth = jax_avals()
    assert traced == truth
    assert traced[(11, "x_ref")] == ["Ref<default>{float32[32,128]}"]  # 4 x num_sublanes rows, num_lanes wide
    assert "Ref<hbm>{float32[16,128]}" in traced[(24, "x_hbm")]  # the memory space the jitted code constrained
