"""Fix-all (the core, `pallas-lsp check --fix/--unsafe-fixes/--diff`): every safe fix at once."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, jax_python
from golden_cases import GOLDEN
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze
from pallas_lsp.fixes.fix_all import fix_all

HERE = Path(__file__).resolve().parent / "fix_all"
UNSAFE = GOLDEN / "scratch_semaphore_grid_unsafe"


def test_fix_all_applies_every_safe_fix_in_turn(tmp_path):
    path = tmp_path / "kernel.py"
    shutil.copy(HERE / "before.py", path)
    project = Project(root=str(tmp_path), python=jax_python())
    assert [f.code for f in analyze(project, str(path))] == ["PAL001", "PAL001", "PAL001"]
    result = fix_all(project, str(path))
    assert [fix.title for fix in result.applied] == [
        "pallas-lsp (PAL001): Pass scale as a kernel operand",
        "pallas-lsp (PAL001): Pass shift as a kernel operand",
        "pallas-lsp (PAL001): Use a global semaphore (plgpu.SemaphoreType.REGULAR)"]
    assert result.texts == {str(path): (HERE / "after.py").read_text()}
    assert analyze(project, str(path), result.texts[str(path)]) == []
    assert fix_all(project, str(path), result.texts[str(path)]).texts == {}


@pytest.mark.jax
def test_fix_all_result_lowers_with_real_jax():
    run = subprocess.run([jax_python(), str(REPO / "tests" / "fixes" / "jax_lower.py"), str(HERE / "after.py")],
                         capture_output=True, text=True, timeout=600, cwd=REPO)
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(run.stdout) == {str(HERE / "after.py"): {"ok": True, "error": None}}


def cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--python", jax_python(), *args],
                          capture_output=True, text=True, cwd=cwd, timeout=300)


@pytest.fixture
def workspace(tmp_path):
    shutil.copy(HERE / "before.py", tmp_path / "safe.py")
    shutil.copy(UNSAFE / "before.py", tmp_path / "unsafe.py")
    return tmp_path


def test_diff_prints_the_safe_fixes_and_writes_nothing(workspace):
    run = cli("--diff", ".", cwd=workspace)
    assert run.returncode == 1
    assert run.stdout.startswith("--- a/safe.py\n+++ b/safe.py\n")
    assert "-def body(x_ref, o_ref):\n" in run.stdout and "+def body(shift_ref, scale_ref, x_ref, o_ref):\n" in run.stdout
    assert "unsafe.py" not in run.stdout  # its only fix is unsafe
    assert (workspace / "safe.py").read_text() == (HERE / "before.py").read_text()


def test_fix_writes_safe_fixes_and_reports_what_remains(workspace):
    run = cli("--fix", ".", cwd=workspace)
    assert (run.returncode, run.stderr) == (1, "pallas-lsp: applied 3 fixes in 1 file\n"
                                               "pallas-lsp: 1 finding has only unsafe fixes (apply them with --unsafe-fixes)\n")
    assert (workspace / "safe.py").read_text() == (HERE / "after.py").read_text()
    assert run.stdout.splitlines()[0].startswith("unsafe.py:11:9: PAL002 JAX: \"TypeError: No ir_type_handler for aval type")
    run = cli("--fix", "--unsafe-fixes", ".", cwd=workspace)
    assert (run.returncode, run.stderr) == (0, "pallas-lsp: applied 1 fix in 1 file\n")
    # Of its two unsafe fixes, running compiled keeps what the kernel means (scratch would not be shared by
    # the two blocks), so fix-all applies that one.
    before = (UNSAFE / "before.py").read_text()
    assert ', interpret=True)\n' in before
    assert (workspace / "unsafe.py").read_text() == before.replace(', interpret=True)\n', ')\n')


UNFIXABLE = (HERE.parent / "no_fix" / "shape_from_argument.py").read_text()


@pytest.mark.parametrize("mode", ["--fix", "--diff"])
def test_fix_and_diff_say_how_many_findings_have_no_automatic_fix(tmp_path, mode):
    """As ruff does: what could not be fixed is said, not left for the user to guess."""
    (tmp_path / "kernel.py").write_text(UNFIXABLE)
    run = cli(mode, ".", cwd=tmp_path)
    assert run.returncode == (1 if mode == "--fix" else 0)
    assert run.stderr.splitlines()[-1] == "pallas-lsp: 1 finding has no automatic fix"
    assert (tmp_path / "kernel.py").read_text() == UNFIXABLE


def test_a_display_only_fix_is_offered_but_never_applied_by_fix_all(tmp_path):
    """PAL009 compiled for a TPU: JAX accepts the kernel, so --unsafe-fixes leaves it; the editor offers the
    rewrite (golden signal_back_compiled_tpu_display_only)."""
    from pallas_lsp.fixes import fixes_for

    before = (GOLDEN / "signal_back_compiled_tpu_display_only" / "before.py").read_text()
    (tmp_path / "kernel.py").write_text(before)
    run = cli("--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert (run.returncode, run.stderr.splitlines()[-1]) == (0, "pallas-lsp: 1 finding has no automatic fix")  # a warning
    assert (tmp_path / "kernel.py").read_text() == before
    project = Project(root=str(tmp_path), python=jax_python())
    [finding] = analyze(project, str(tmp_path / "kernel.py"))
    assert [(f.title.split(" (unsafe")[0], f.applicability) for f in fixes_for(project, finding)] == [
        ("pallas-lsp (PAL009): Wait, then signal the count back, as decrement=False asks", "display_only"),
        ("pallas-lsp (PAL009): Disable PAL009 for this line", "safe")]


PEEK_ON_A_DMA_SEMAPHORE = '''import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def body(x_ref, o_ref, sem):
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem, 1, decrement=False)
  pl.semaphore_wait(sem, 1)
  o_ref[...] = x_ref[...]


def target():
  fn = pl.pallas_call(body, out_shape=X, scratch_shapes=[pltpu.SemaphoreType.DMA],
                      compiler_params=pltpu.CompilerParams())
  return fn, (X,), "tpu"
'''


def test_an_unsafe_fix_all_also_applies_a_display_only_fix_in_a_kernel_it_rewrites(tmp_path):
    """JAX rejects the signalled DMA semaphore (PAL013): once REGULAR, the compiled TPU kernel would hang on the
    count its decrement=False wait consumed (PAL009), so --unsafe-fixes, already rewriting the kernel, also
    signals the count back; --fix alone, and a kernel JAX accepts (the test above), keep the wait."""
    path = tmp_path / "kernel.py"
    path.write_text(PEEK_ON_A_DMA_SEMAPHORE)
    project = Project(root=str(tmp_path), python=jax_python())
    assert sorted(f.code for f in analyze(project, str(path))) == ["PAL009", "PAL013"]
    safe = fix_all(project, str(path))
    assert [f.title.split(" (")[1] for f in safe.applied] == ["PAL013): Allocate a REGULAR semaphore"]
    assert [f.code for f in analyze(project, str(path), safe.texts[str(path)])] == ["PAL009"]
    unsafe = fix_all(project, str(path), unsafe=True)
    assert [f.title.split(",")[0].split(" (unsafe")[0] for f in unsafe.applied] == [
        "pallas-lsp (PAL013): Allocate a REGULAR semaphore (only signalled and waited on)",
        "pallas-lsp (PAL009): Wait"]
    fixed = unsafe.texts[str(path)]
    assert "  pl.semaphore_wait(sem, 1)\n  pl.semaphore_signal(sem, 1)\n  pl.semaphore_wait(sem, 1)\n" in fixed
    assert analyze(project, str(path), fixed) == []


@pytest.mark.jax
def test_the_kernel_fixed_with_its_display_only_fix_lowers_for_a_tpu_and_the_original_does_not(tmp_path):
    (tmp_path / "before.py").write_text(PEEK_ON_A_DMA_SEMAPHORE)
    project = Project(root=str(tmp_path), python=jax_python())
    (tmp_path / "after.py").write_text(fix_all(project, str(tmp_path / "before.py"), unsafe=True).texts[
        str(tmp_path / "before.py")])
    run = subprocess.run([jax_python(), str(REPO / "tests" / "fixes" / "jax_lower.py"), str(tmp_path / "before.py"),
                          str(tmp_path / "after.py")], capture_output=True, text=True, timeout=600, cwd=REPO)
    results = json.loads(run.stdout)
    assert "Got dma_sem." in results[str(tmp_path / "before.py")]["error"]
    assert results[str(tmp_path / "after.py")] == {"ok": True, "error": None}


def test_fix_with_diff_writes_nothing_as_ruff_does_and_says_fix_is_ignored(workspace):
    alone = cli("--diff", ".", cwd=workspace)
    run = cli("--fix", "--diff", ".", cwd=workspace)
    assert (run.returncode, run.stdout) == (1, alone.stdout)
    assert run.stderr == "pallas-lsp: warning: --diff prints the fixes without writing them: --fix is ignored\n" + alone.stderr
    assert (workspace / "safe.py").read_text() == (HERE / "before.py").read_text()


def test_unsafe_fixes_alone_fixes_nothing_and_says_so(workspace):
    plain = cli(".", cwd=workspace)
    run = cli("--unsafe-fixes", ".", cwd=workspace)
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout) == (1, plain.stdout)
    assert run.stderr == "pallas-lsp: warning: --unsafe-fixes does nothing without --fix or --diff: no fix is applied\n"
    assert (workspace / "unsafe.py").read_text() == (UNSAFE / "before.py").read_text()
    assert (workspace / "safe.py").read_text() == (HERE / "before.py").read_text()


BARRIER_INTERPRETED = '''import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


@plgpu.kernel(out_type=X, interpret=True)
def body(x_ref, o_ref):
  kind = plgpu.Barrier(num_arrivals=1)
  bar = pl.get_global(kind)
  o_ref[...] = x_ref[...] + 1.0
'''


def test_a_finding_without_a_fix_is_tried_again_once_another_fix_changed_the_text(tmp_path):
    """Under interpret=True a barrier has no scratch form (it runs none); once "Run the kernel compiled" removed
    interpret=True, the barrier's own finding (PAL001) gets its scratch fix, in the same fix-all."""
    (tmp_path / "kernel.py").write_text(BARRIER_INTERPRETED)
    run = cli("--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert (run.returncode, run.stderr) == (0, "pallas-lsp: applied 2 fixes in 1 file\n")
    assert (tmp_path / "kernel.py").read_text() == BARRIER_INTERPRETED.replace(
        "from jax.experimental import pallas as pl\n", "").replace(
        "@plgpu.kernel(out_type=X, interpret=True)\ndef body(x_ref, o_ref):",
        "@plgpu.kernel(out_type=X, scratch_types=[plgpu.Barrier(num_arrivals=1)])\ndef body(x_ref, o_ref, bar_ref):").replace(
        "  bar = pl.get_global(kind)\n", "")


SEM_TYPES = '''from jax.experimental.pallas import tpu as pltpu

SEM = pltpu.SemaphoreType.REGULAR
'''

UNUSED_OUTPUT_AND_TPU_TYPE = '''import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from sem_types import SEM

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, done_ref):
  sem = pl.get_global(SEM)
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem)
  o_ref[...] = x_ref[...] + 1.0


def target():
  kernel = plgpu.kernel(body, out_type=(X, plgpu.SemaphoreType.REGULAR), grid=(2,), grid_names=("x",))
  return kernel, (X,), "cuda"
'''


def test_a_fix_in_an_imported_module_leaves_the_unused_output_fix_offered(tmp_path):
    """PAL001's fix edits sem_types.py, which rebuilds kernel.py's kernel index: the out_type finding's entry
    is then another object for the same launch, and its fix (drop the unused semaphore output) still applies."""
    (tmp_path / "sem_types.py").write_text(SEM_TYPES)
    (tmp_path / "kernel.py").write_text(UNUSED_OUTPUT_AND_TPU_TYPE)
    run = cli("--fix", "--unsafe-fixes", "kernel.py", cwd=tmp_path)
    assert (run.returncode, run.stderr) == (0, "pallas-lsp: applied 2 fixes in 2 files\n")
    assert (tmp_path / "kernel.py").read_text() == UNUSED_OUTPUT_AND_TPU_TYPE.replace(
        "o_ref, done_ref)", "o_ref)").replace("(X, plgpu.SemaphoreType.REGULAR)", "(X,)")
    assert "SEM = plgpu.SemaphoreType.REGULAR\n" in (tmp_path / "sem_types.py").read_text()


BARRIER_HELPER = '''from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu


def arrive_and_wait(kind=pltpu.SemaphoreType.REGULAR):
  ready = pl.get_global(kind)
  plgpu.barrier_arrive(ready)
  plgpu.barrier_wait(ready)
'''

UNUSED_OUTPUT_AND_BARRIER_TYPE = '''import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from helpers import arrive_and_wait

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, s_ref):
  def step(i, carry):
    sem = pl.get_global(plgpu.SemaphoreType.BARRIER)
    pl.semaphore_signal(sem)
    pl.semaphore_wait(sem)
    return carry
  lax.fori_loop(0, 2, step, 0)
  arrive_and_wait()
  o_ref[...] = x_ref[...] + 1.0


fn = pl.kernel(body, out_type=(X, plgpu.SemaphoreType.REGULAR), mesh=plgpu.Mesh(), interpret=True)
'''


def test_fix_all_applies_in_one_run_what_a_second_run_would(tmp_path):
    """Checking the scratch fix tried other texts of kernel.py (and analysed the helper module through them), so
    the project's cached model of the fixed text was another object than the one the out_type finding was
    computed from, and its fix (drop the unused semaphore output) was refused until a second run (generated
    kernel g2_00172). The helper's barrier (interpret=True runs none) keeps its findings."""
    (tmp_path / "helpers.py").write_text(BARRIER_HELPER)
    (tmp_path / "kernel.py").write_text(UNUSED_OUTPUT_AND_BARRIER_TYPE)
    run = cli("--fix", "--unsafe-fixes", "kernel.py", cwd=tmp_path)
    assert run.stderr == "pallas-lsp: applied 2 fixes in 1 file\n"
    assert (tmp_path / "kernel.py").read_text() == UNUSED_OUTPUT_AND_BARRIER_TYPE.replace(
        "o_ref, s_ref)", "o_ref, sem_ref)").replace(
        "    sem = pl.get_global(plgpu.SemaphoreType.BARRIER)\n", "").replace("(sem)", "(sem_ref)").replace(
        "fn = pl.kernel(body, out_type=(X, plgpu.SemaphoreType.REGULAR), mesh=plgpu.Mesh(), interpret=True)\n",
        "fn = pl.kernel(\n  body,\n  out_type=(X,),\n  mesh=plgpu.Mesh(),\n  interpret=True,\n"
        "  scratch_types=[plgpu.SemaphoreType.REGULAR],\n)\n")
    assert (tmp_path / "helpers.py").read_text() == BARRIER_HELPER
