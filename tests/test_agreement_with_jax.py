"""The rules agree with real JAX: it fails exactly where the analyzer reports, and only there.

Every fixture in tests/fixtures/agreement/ is run through JAX 0.12 (`tests/jax_truth.py`: Mosaic GPU
cross-lowering for "cuda" fixtures, Triton under an abstract H200 for "triton", TPU TensorCore and
SparseCore cross-lowering for "tpu"/"sparsecore", the interpreter on the CPU for interpret-mode ones)
and through the analyzer; the lines must match.
"""

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO, jax_python
from pallas_lsp.analysis import Project, analyze

pytestmark = pytest.mark.jax

AGREEMENT = FIXTURES / "agreement"
CASES = sorted(p.name for p in AGREEMENT.glob("*.py"))


# (exception type, words in JAX's message) -> the rule that reports it.
JAX_FAILURES = (
    ("NotImplementedError", "get_global only supports semaphores", "PAL001"),
    ("AttributeError", "get_ref_aval", "PAL001"),
    ("TypeError", "get_global() got an unexpected keyword argument", "PAL001"),
    ("TypeError", "No ir_type_handler for aval type", "PAL002"),
    ("NotImplementedError", "Unimplemented primitive in Pallas", "PAL003"),
    ("IndexError", "Slice DynamicSlice", "PAL004"),
    ("ValueError", "non-()-shaped semaphore", "PAL005"),
    ("ValueError", "`indices` must not be longer than `shape`", "PAL005"),
    ("ValueError", "barrier must be a SMEM reference", "PAL006"),
    ("ValueError", "Only thread-collective allocations are supported in run_scoped", "PAL007"),
    ("ValueError", "Kernels cannot return semaphores", "PAL008"),
    ("ValueError", "Cannot lower jaxpr with effects", "PAL008"),
)


def expected_code(truth: dict) -> str:
    for exc_type, words, code in JAX_FAILURES:
        if truth["exc_type"] == exc_type and words in truth["message"]:
            return code
    raise AssertionError(f"JAX failed in a way no rule covers: {truth}")


@pytest.fixture(scope="module")
def jax_results() -> dict:
    paths = [str(AGREEMENT / name) for name in CASES]
    run = subprocess.run([jax_python(), str(REPO / "tests" / "jax_truth.py"), *paths],
                         capture_output=True, text=True, timeout=600, cwd=REPO)
    assert run.returncode == 0, run.stderr[-3000:]
    return {Path(k).name: v for k, v in json.loads(run.stdout).items()}


@pytest.fixture(scope="module")
def project() -> Project:
    return Project(root=str(AGREEMENT), python=jax_python())


def lines_by_code(project, path) -> dict[int, set[str]]:
    found: dict[int, set[str]] = {}
    for finding in analyze(project, str(path)):
        found.setdefault(finding.span.line + 1, set()).add(finding.code)
    return found


@pytest.mark.parametrize("name", CASES)
def test_analyzer_agrees_with_jax(jax_results, project, name):
    truth = jax_results[name]
    assert name.startswith("good_") == truth["ok"], f"fixture name and JAX disagree: {truth}"
    fixture = AGREEMENT / name
    here = lines_by_code(project, fixture)
    if truth["ok"]:
        assert here == {}, f"JAX lowers {name}, but the analyzer reports {here}"
        return
    code = expected_code(truth)
    blamed = {(os.path.realpath(loc["path"]), loc["line"]) for loc in truth["locations"]}
    assert blamed, f"JAX gave no location: {truth}"
    in_fixture = {line for path, line in blamed if path == os.path.realpath(fixture)}
    assert set(here) == in_fixture, f"JAX blames lines {sorted(in_fixture)}, the analyzer {here}"
    for path, line in blamed:
        found = here if path == os.path.realpath(fixture) else lines_by_code(project, path)
        assert code in found.get(line, set()), f"JAX: {truth['exc_type']} at {path}:{line}; analyzer: {found}"
