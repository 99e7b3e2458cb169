"""A helper called from a pipeline step defined beside the kernel body (golden
scratch_through_pipeline_step_beside_body: the step moves into the body). Where only a thread-collective
pl.run_scoped could allocate the buffer, no fix: jax 0.12 lowers it with a barrier every warpgroup must reach,
and a warp-specialized pipeline's step runs in the compute warpgroups only."""

from __future__ import annotations

from pathlib import Path

from conftest import jax_python
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze
from pallas_lsp.fixes import fixes_and_reason

GOLDEN = Path(__file__).resolve().parent / "golden" / "scratch_through_pipeline_step_beside_body" / "before.py"


def test_a_type_only_the_factory_knows_gets_no_thread_collective_run_scoped(tmp_path):
    # The tile's size is a parameter of the factory: the launch cannot write it, so scratch is refused too.
    text = GOLDEN.read_text().replace("def _scale_tile(x_smem, o_smem, factor):", "def _scale_tile(x_smem, o_smem, "
                                      "factor, block):").replace(
        "plgpu.SMEM((BLOCK, BLOCK), jnp.float32)", "plgpu.SMEM((block, block), jnp.float32)").replace(
        "_scale_tile(x_smem, o_smem, factor)", "_scale_tile(x_smem, o_smem, factor, m // 4)")
    path = tmp_path / "k.py"
    path.write_text(text)
    project = Project(root=str(tmp_path), python=jax_python())
    [finding] = [f for f in analyze(project, str(path)) if f.code == "PAL001"]
    fixes, reason = fixes_and_reason(project, finding)
    assert [f.title for f in fixes if f.kind == "rewrite"] == []
    assert "a thread-collective pl.run_scoped waits for all of them" in reason
