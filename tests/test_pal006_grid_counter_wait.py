"""PAL006 on `plgpu.barrier_wait` of a global counter other blocks `pl.semaphore_signal`: the advice is the
counting wait (`pl.semaphore_wait(sem, n)`), not an SMEM barrier, which cannot see other blocks' signals;
the barrier-as-scratch fix is not offered there, the counting wait is (n the blocks that signal, counted from
their `pl.when` tests of the grid axes). JAX's verdicts: tests/fixtures/agreement/*grid_counter*."""

from conftest import FIXTURES
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze

AGREEMENT = FIXTURES / "agreement"


def test_a_grid_counter_waited_with_barrier_wait_is_advised_the_counting_wait():
    project = Project(root=str(AGREEMENT))
    path = AGREEMENT / "bad_barrier_wait_on_grid_counter_signalled_by_other_blocks.py"
    (finding,) = [f for f in analyze(project, str(path)) if f.code == "PAL006"]
    assert finding.span.line + 1 == 23
    assert "use pl.semaphore_wait(sem, n)" in finding.message and "use an SMEM" not in finding.message
    from pallas_lsp.fixes import fixes_and_reason

    fixes, _ = fixes_and_reason(project, finding)
    assert [fix.title for fix in fixes] == [
        'pallas-lsp (PAL006): Wait for the blocks\' signals: pl.semaphore_wait(done, jax.lax.axis_size("splits") - 1)',
        "pallas-lsp (PAL006): Disable PAL006 for this line"]


def test_a_barrier_only_arrived_on_and_waited_keeps_the_barrier_advice():
    folder = FIXTURES.parent / "fixes" / "golden" / "barrier_scratch_two_warpgroups"
    project = Project(root=str(folder))
    findings = [f for f in analyze(project, str(folder / "before.py")) if f.code == "PAL006"]
    assert findings and all("use an SMEM plgpu.Barrier" in f.message for f in findings)
