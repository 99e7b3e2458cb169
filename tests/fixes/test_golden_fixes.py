"""Each fix turns before.py into after.py exactly, removes its findings without adding any, and
is not offered again; the fixed programs lower (or run) with real JAX.

Set PALLAS_LSP_UPDATE_GOLDEN=1 to rewrite the after files from the current fixes (then review them).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from conftest import REPO, jax_python
from golden_cases import clear, load_cases
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze
from pallas_lsp.fixes import fixes_for
from pallas_lsp.fixes.edits import apply_edits
from pallas_lsp.fixes.fix_all import fix_all

CASES = load_cases()
IDS = [case.name for case in CASES]
UPDATE = os.environ.get("PALLAS_LSP_UPDATE_GOLDEN") == "1"


def title(case) -> str:
    return f"pallas-lsp ({case.code}): {case.fix}"


def analysed(case, which: str, root: Path):
    case.copy(which, root)
    project = Project(root=str(root), python=jax_python())
    path = root / case.workspace_file(case.file)
    return project, path, analyze(project, str(path))


def applied(case, tmp_path):
    """(findings before, the finding fixed, {workspace file: text after the fix})."""
    root = tmp_path / "before"
    project, _, findings = analysed(case, "before", root)
    offered_for = {f: fixes_for(project, f) for f in findings}
    chosen = [(f, fix) for f in findings if f.code == case.code and case.line in (None, f.span.line + 1)
              for fix in offered_for[f] if fix.title == title(case)]
    offered = {fix.title for fixes in offered_for.values() for fix in fixes}
    assert len(chosen) == 1, f"{title(case)!r} offered {len(chosen)} times; offered: {sorted(offered)}"
    finding, fix = chosen[0]
    texts = dict(case.names("before"))
    for file_path in {e.path for e in fix.edits}:
        name = Path(file_path).name
        assert Path(file_path).parent == root, f"edit outside the workspace: {file_path}"
        texts[name] = apply_edits(texts[name], [e for e in fix.edits if e.path == file_path])
    return findings, finding, texts


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_fix_gives_the_golden_text(case, tmp_path):
    _, _, texts = applied(case, tmp_path)
    if UPDATE:
        if case.multi_file:
            clear(case.folder / "after")
            (case.folder / "after").mkdir()
            for name, text in texts.items():
                (case.folder / "after" / name).write_text(text)
        else:
            (case.folder / "after.py").write_text(texts["kernel.py"])
    assert texts == case.names("after")
    for text in texts.values():
        ast.parse(text)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_fixed_file_has_no_fixed_finding_and_no_new_one_and_the_fix_is_gone(case, tmp_path):
    before, fixed, _ = applied(case, tmp_path)
    project, path, after = analysed(case, "after", tmp_path / "after")
    gone = Counter((f.code, f.message) for f in before if f.span == fixed.span)
    expected = Counter((f.code, f.message) for f in before) - gone
    if case.line is not None:  # one fix for several findings (uses of one get_global): all of them go
        expected = Counter({kind: n for kind, n in expected.items() if kind[0] != case.code})
    expected = Counter({kind: n for kind, n in expected.items() if kind[0] not in case.also_removes})
    assert Counter((f.code, f.message) for f in after) == expected
    assert not any(fix.title == title(case) for f in after for fix in fixes_for(project, f))
    if not after:
        assert fix_all(project, str(path)).texts == {}  # applying fixes again changes nothing


@pytest.mark.jax
def test_fixed_kernels_lower_with_real_jax_and_the_originals_do_not():
    runner = REPO / "tests" / "fixes" / "jax_lower.py"
    proven = [case for case in CASES if case.jax]

    def run(which: str, cases: list, compiled: bool = False) -> dict:
        paths = [str(case.path(which)) for case in cases]
        done = subprocess.run([jax_python(), str(runner), *(["--compiled"] if compiled else []), *paths],
                              capture_output=True, text=True, timeout=900, cwd=REPO)
        assert done.returncode == 0, done.stderr[-3000:]
        results = json.loads(done.stdout)
        return {case.name: results[path] for case, path in zip(cases, paths)}

    # A fix that made an interpreted kernel compiled ("Run the kernel compiled"): its after side is lowered for CUDA.
    after = {**run("after", [case for case in proven if not case.compiled]),
             **run("after", [case for case in proven if case.compiled], compiled=True)}
    before = run("before", proven)
    assert {name: r["error"] for name, r in after.items() if not r["ok"]} == {}
    # The originals fail because of get_global (in interpret mode JAX reports it as a TypeError; the
    # gridless ones and those with a get_global in a branch lowered twice, as PAL004's IndexError; an
    # unindexed shaped one, or one used as a barrier, as a
    # ValueError; for a ShapeDtypeStruct, as an AttributeError on get_ref_aval; a semaphore output or
    # a semaphore read into an array is refused by plgpu.kernel; a TPU copy's semaphore read out of its
    # ref, by the copy, and by pl.semaphore_signal / wait; a DMA semaphore signalled, by pl.semaphore_signal; a
    # non-decrementing wait, by the TPU interpreter; a TPU semaphore returned outside the semaphore memory space,
    # by the TPU lowering as a block of an array; a collective_id among the TPU interpreter's semaphore ids, by the
    # interpreter; a copy's REGULAR semaphore, by its .wait(); two scratch buffers where one would do, by the shared
    # memory budget; a local copy's src_sem, by the TensorCore lowering; a semaphore array sliced under the TPU
    # interpreter, by dynamic_slice; a buffer of the other backend's memory space, or a GMEM scratch, by the lowering
    # that places the kernel's buffers; a barrier semaphore without a collective_id, by the TPU lowering or the
    # interpreter's int(None); an SMEM buffer written as an array, by the TPU lowering; a barrier waited on or
    # signalled as a semaphore, a semaphore indexed past its shape, a run_scoped buffer over the grid, by the
    # Mosaic GPU lowering; a TMA copy or warp specialization under interpret=True, by the generic interpreter; a barrier
    # array given whole to a copy, by the Mosaic GPU lowering too; plgpu.alloc_semaphore() in a body, by to_edtype's
    # lowering; a semaphore under the GPU interpreter, by its arithmetic; a list of semaphore types as one scratch, by
    # `.at`; a Mosaic GPU kernel under the TPU interpreter, by its memory spaces).
    reasons = ("get_global", "No ir_type_handler for aval type", "get_ref_aval", "IndexError: Slice DynamicSlice(base=",
               "non-()-shaped semaphore", "barrier must be a SMEM reference", "Kernels cannot return semaphores",
               "Cannot pass semaphores into kernels as arrays", "Invalid out_shape type", "semaphore must be a Ref",
               "non-semaphore Ref", "Got dma_sem.", "Non-decrementing wait is not supported.",
               "unexpected input: dtype=dma_sem", "occurs as both fixed-id and internal",
               "dma_wait requires a DMA semaphore", "exceeds available shared memory",
               "on a local copy without device_id", "to a primitive: dynamic_slice", "Unsupported memory space: ",
               "Invalid memory space: ", "collective_id has to be specified when using a custom barrier", "not 'NoneType'",
               "Can only store scalars to SMEM", "Must wait semaphores of the following types",
               "Must signal semaphores of the following types", "`indices` must not be longer than `shape`",
               "Only thread-collective allocations are supported in run_scoped",
               "No state discharge rule implemented for primitive", "run_scoped interpret rule does not support collective",
               "Operation is only valid for a single barrier", "If `grid_spec` is specified, then", "to_edtype",
               "nan + semaphore", "AbstractSemaphoreTyRules' has no attribute 'full'", "object has no attribute 'at'",
               "KeyError: <MemorySpace.GMEM")
    silent = {case.name for case in proven if case.before_lowers}  # JAX lowers them, otherwise than written
    assert {name for name, r in before.items() if name in silent and not r["ok"]} == set()
    assert {name: r["error"] for name, r in before.items()
            if name not in silent and (r["ok"] or not any(w in r["error"] for w in reasons))} == {}
