"""The rules agree with real JAX: it fails exactly where the analyzer reports, and only there.

Every fixture in tests/fixtures/agreement/ is run through JAX 0.12 (`tests/jax_truth.py`: Mosaic GPU
cross-lowering for "cuda" fixtures, Triton under an abstract H200 for "triton", TPU TensorCore and
SparseCore cross-lowering for "tpu"/"sparsecore", the interpreter on the CPU for interpret-mode ones)
and through the analyzer; the lines must match.
"""

import json
import os

import pytest

from conftest import FIXTURES, jax_python, jax_truth
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze

pytestmark = pytest.mark.jax

AGREEMENT = FIXTURES / "agreement"
CASES = sorted(p.name for p in AGREEMENT.glob("*.py"))


# (exception type, words in JAX's message) -> the rule that reports it.
JAX_FAILURES = (
    ("NotImplementedError", "get_global only supports semaphores", "PAL001"),
    ("AttributeError", "get_ref_aval", "PAL001|PAL027"),  # a struct given to get_global, or as scratch / run_scoped
    ("TypeError", "get_global() got an unexpected keyword argument", "PAL001"),
    ("TypeError", "get_global() takes 1 positional argument", "PAL001"),
    ("TypeError", "get_global() got multiple values for argument", "PAL001"),
    ("TypeError", "get_global() missing 1 required positional argument", "PAL001"),
    ("TypeError", "No ir_type_handler for aval type", "PAL002"),
    ("NotImplementedError", "Mosaic GPU lowering: to_edtype", "PAL028"),  # alloc_semaphore in a kernel (before PAL003's)
    ("NotImplementedError", "Unimplemented primitive in Pallas", "PAL003"),
    ("IndexError", "Slice DynamicSlice", "PAL004"),
    ("ValueError", "non-()-shaped semaphore", "PAL005"),
    ("ValueError", "`indices` must not be longer than `shape`", "PAL005"),
    ("ValueError", "barrier must be a SMEM reference", "PAL006"),
    ("ValueError", "Only thread-collective allocations are supported in run_scoped", "PAL007"),
    ("NotImplementedError", "Unsupported memory space: gmem", "PAL007"),  # a BARRIER semaphore from run_scoped
    ("ValueError", "Kernels cannot return semaphores", "PAL008"),
    ("ValueError", "Invalid out_shape type: <enum 'SemaphoreType'>", "PAL008"),
    ("TypeError", "as a data type", "PAL008"),
    ("ValueError", "unexpected input: dtype=", "PAL008"),  # a shaped semaphore type in a TPU out_shape
    ("ValueError", "supports only blocks of rank >= 1", "PAL008"),  # a bare TPU semaphore type in out_shape
    ("ValueError", "Cannot lower jaxpr with effects", "PAL008"),
    ("ValueError", "Cannot pass semaphores into kernels as arrays", "PAL008"),
    ("NotImplementedError", "Evaluation rule for 'get_global' not implemented", "PAL008"),
    ("NotImplementedError", "Non-decrementing wait is not supported", "PAL009"),
    ("ValueError", "DMA source semaphore must be a Ref.", "PAL010"),
    ("ValueError", "DMA destination semaphore must be a Ref.", "PAL010"),
    ("ValueError", "semaphore to be a reference", "PAL010"),  # a copy only waited on: "Expected the ... semaphore to be ..."
    ("JaxRuntimeError", "occurs as both fixed-id and internal", "PAL011"),  # raised in the TPU interpreter's callback
    ("ValueError", "Mosaic GPU kernel exceeds available shared memory", "PAL012"),
    ("ValueError", "columns, exceeding the limit of", "PAL012"),  # TMEM
    ("ValueError", "semaphores of the following types", "PAL013"),  # "Must signal ..." / "Must wait ..."
    ("ValueError", "on a non-semaphore Ref", "PAL014"),  # "Cannot signal ..." / "Cannot wait ..."
    ("ValueError", "Loads are only allowed on VMEM and SMEM references", "PAL014"),  # TPU semaphore_read of a value
    ("ValueError", "Triggering __jax_array__() during abstractification", "PAL014"),  # signal/wait of a select_ref
    ("ValueError", "dma_wait requires a DMA semaphore", "PAL015"),
    ("ValueError", "Operation is only valid for a single barrier", "PAL005"),  # a barrier array given whole
    ("TypeError", "Cannot select from Refs of different types", "PAL005"),
    ("NotImplementedError", "nan + semaphore", "PAL016"),  # the GPU interpreter allocates no semaphore
    ("NotImplementedError", "nan + barrier_semaphore", "PAL016"),
    ("AttributeError", "'AbstractSemaphoreTyRules' has no attribute 'full'", "PAL016"),  # ... zero-filled
    ("NotImplementedError", "Source semaphore (`src_sem`) on a local copy", "PAL017"),
    ("NotImplementedError", "`wait_read` on a local copy without device_id", "PAL017"),
    ("ValueError", "collective_id has to be specified when using a custom barrier", "PAL023"),
    ("ValueError", "Can only store scalars to SMEM", "PAL024"),
    ("ValueError", "Can only load scalars from SMEM", "PAL024"),
    ("NotImplementedError", "No state discharge rule implemented for primitive: copy_", "PAL025"),  # interpret=True
    ("NotImplementedError", "No state discharge rule implemented for primitive: barrier_wait", "PAL025"),
    ("NotImplementedError", "run_scoped interpret rule does not support collective axes", "PAL025"),
    ("KeyError", "<MemorySpace.GMEM: 'gmem'>", "PAL026"),
    ("AttributeError", "object has no attribute 'at'", "PAL029"),  # a list of semaphore types as one scratch entry  # the TPU interpreter given a Mosaic GPU kernel
    ("ValueError", "If `grid_spec` is specified, then", "PAL020"),  # raised by pl.pallas_call itself
    ("JaxRuntimeError", "int() argument must be a string, a bytes-like object or a real number, not 'NoneType'",
     "PAL023"),  # the TPU interpreter's int(collective_id), in its callback
    ("VerificationError", "must be specified when source semaphore is specified", "PAL017"),  # a local wait_recv  # pl.select_ref of unlike semaphore views
)


def expected_code(truth: dict) -> str:
    if truth.get("non_semaphore"):
        return "PAL001"  # a backend without get_global, and no semaphore asked for anyway: the type is the bug
    if truth.get("mode") != "interpret" and "No ir_type_handler" in truth["message"]:
        return "PAL008"  # a global semaphore read in a jitted function, outside any kernel
    if truth["exc_type"] == "NotImplementedError" and not truth["message"]:
        return "PAL010"  # pl.select_ref of a value read out of a semaphore, for a TPU copy: JAX says no more
    for exc_type, words, code in JAX_FAILURES:
        if truth["exc_type"] == exc_type and words in truth["message"]:
            return code
    raise AssertionError(f"JAX failed in a way no rule covers: {truth}")


@pytest.fixture(scope="module")
def jax_results() -> dict:
    return jax_truth([AGREEMENT / name for name in CASES])


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
        assert set(code.split("|")) & found.get(line, set()), \
            f"JAX: {truth['exc_type']} at {path}:{line}; analyzer: {found}"


def first_sentence(message: str) -> str:
    """Up to the first ". " after JAX's quoted words (a quote may contain dots)."""
    quoted_end = message.find('"', message.find('"') + 1) if message.startswith('JAX: "') else 0
    end = message.find(". ", quoted_end)
    return message if end < 0 else message[:end]


def test_first_sentences_fit_the_problems_panel(project):
    """Editors cut the Problems panel at about 120 characters: JAX's words and what to do come first."""
    long = {}
    for fixture in sorted(AGREEMENT.glob("bad_*.py")):
        for finding in analyze(project, str(fixture)):
            if finding.code != "PAL000" and len(first_sentence(finding.message)) > 120:
                long.setdefault(fixture.name, []).append(first_sentence(finding.message))
    assert long == {}


# Other jax versions' verdicts, recorded where they ran (docs/jax-versions.md): jax 0.11.1 (the last release where
# a bare GPU pallas_call lowered through Mosaic GPU) on this CPU machine, in a temporary venv; jax 0.11.2 on an
# H200 through the device tool, compiled (`JAX_TRUTH_COMPILE=1`). The analyser is run as if the environment had
# that version; CI needs neither.
RECORDED = {(0, 11, 1): "EXPECTED_JAX_0.11.1.json", (0, 11, 2): "EXPECTED_JAX_0.11.2_H200.json"}
RECORDED_CASES = [(version, name) for version, record in RECORDED.items()
                  for name in sorted(json.loads((AGREEMENT / record).read_text()))]


@pytest.fixture(scope="module")
def recorded_projects() -> dict:
    projects = {}
    for version, record in RECORDED.items():
        project = Project(root=str(AGREEMENT), python=jax_python())
        project._jax_version = version  # analyse as if the environment had this jax
        projects[version] = (project, json.loads((AGREEMENT / record).read_text()))
    return projects


@pytest.mark.parametrize("version,name", RECORDED_CASES, ids=[f"{'.'.join(map(str, v))}-{n}" for v, n in RECORDED_CASES])
def test_analyzer_follows_recorded_jax_versions(recorded_projects, version, name):
    """Verdict and lines agree with the recorded run (locations relative to the fixture folder)."""
    project, records = recorded_projects[version]
    truth = records[name]
    here = lines_by_code(project, AGREEMENT / name)
    if truth["ok"]:
        assert here == {}, f"jax {version} lowers {name}, but the analyzer reports {here}"
        return
    blamed = {(path, line) for path, line in truth["locations"]}
    found = {(name, line) for line in here}
    for path in {path for path, _ in blamed if path != name}:
        found |= {(path, line) for line in lines_by_code(project, AGREEMENT / path)}
    assert found, f"jax {version} fails on {name} ({truth['exc_type']}: {truth['message']}), the analyzer reports nothing"
    if blamed:
        # The fixture's own lines must be exactly JAX's; a shared helper module also carries other fixtures' findings.
        assert {b for b in blamed if b[0] == name} == {f for f in found if f[0] == name}
        assert blamed <= found, f"jax {version} blames {sorted(blamed)}, the analyzer {sorted(found)}"


def test_semaphore_operands_are_not_reported_before_jax_0_12():
    """jax 0.11 has no plgpu.alloc_semaphore (AttributeError where it is called, recorded in
    docs/jax-versions.md): the fixtures that call it get no PAL008 there, and do in 0.12."""
    fixture = AGREEMENT / "bad_semaphore_operand_read.py"
    for version, expected in (((0, 11, 1), {}), ((0, 12, 0), {20: {"PAL008"}})):
        project = Project(root=str(AGREEMENT), python=jax_python())
        project._jax_version = version
        assert lines_by_code(project, fixture) == expected, version
