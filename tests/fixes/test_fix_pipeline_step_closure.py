"""A helper called from a pipeline step defined beside the kernel body (goldens
scratch_through_pipeline_step_beside_body, scratch_through_pipeline_step_helper_argument: the step moves into the
body). Where only a thread-collective
pl.run_scoped could allocate the buffer, no fix: jax 0.12 lowers it with a barrier every warpgroup must reach,
and a warp-specialized pipeline's step runs in the compute warpgroups only."""

from __future__ import annotations

from pathlib import Path

from conftest import jax_python
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze
from pallas_lsp.fixes import fixes_and_reason

GOLDEN = Path(__file__).resolve().parent / "golden" / "scratch_through_pipeline_step_beside_body" / "before.py"


def test_a_pl_kernel_gets_no_thread_collective_run_scoped_in_a_pipeline_step(tmp_path):
    # A pl.kernel over a plgpu.Mesh takes no scratch: only run_scoped could allocate it, and it may not here.
    text = GOLDEN.read_text().replace(
        "plgpu.kernel(_make_body(m, n, factor), out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),\n"
        "                        num_threads=2, thread_name=\"wg\")",
        "pl.kernel(_make_body(m, n, factor), out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),\n"
        "                     mesh=plgpu.Mesh(num_threads=2, thread_name=\"wg\"))")
    assert "pl.kernel(_make_body" in text
    path = tmp_path / "k.py"
    path.write_text(text)
    project = Project(root=str(tmp_path), python=jax_python())
    [finding] = [f for f in analyze(project, str(path)) if f.code == "PAL001"]
    fixes, reason = fixes_and_reason(project, finding)
    assert [f.title for f in fixes if f.kind == "rewrite"] == []
    assert "a thread-collective pl.run_scoped waits for all of them" in reason
