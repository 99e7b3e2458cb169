"""PAL012: every kernel of the corpus gets the shared memory (and TMEM columns) JAX's own estimator and
`_launch` compute for it, JAX refuses exactly the kernels reported, and the limit is the analysed jax's."""

import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, jax_python, jax_truth
from lsp_wire import WireServer
from pallas_lsp.analysis import Project
from pallas_lsp.engine import analyze
from pallas_lsp.analysis.jax_version import jax_package_folder
from pallas_lsp.analysis.kernel_model import kernel_models
from pallas_lsp.analysis.mosaic_gpu_limits import _read_limits

pytestmark = pytest.mark.jax

CORPUS = sorted({*(FIXTURES / "smem_budget").glob("*.py"), *(FIXTURES / "agreement").glob("*_smem_*.py"),
                 *(FIXTURES / "agreement").glob("*_tmem_*.py")})
JAX_REFUSES = ("Mosaic GPU kernel exceeds available shared memory", "After rounding up, got")


@pytest.fixture(scope="module")
def jax_figures() -> dict:
    """What real JAX computed for each corpus kernel, lowering it for cuda (tests/jax_truth.py)."""
    return jax_truth(CORPUS, "--resources")


@pytest.fixture(scope="module")
def project() -> Project:
    return Project(root=str(FIXTURES), python=jax_python())


def test_the_corpus_has_kernels_that_fit_at_the_limit_and_over_it(jax_figures):
    refused = {name for name, truth in jax_figures.items() if not truth["ok"]}
    assert len(jax_figures) == len(CORPUS) >= 15
    assert {"bad_smem_scratch_over_budget.py", "bad_smem_at_limit_plus_barrier.py", "bad_tmem_columns_over_budget.py"} <= refused
    assert jax_figures["good_smem_at_limit.py"]["resources"] == {"smem_bytes": 232448, "tmem_cols": 0}


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_estimate_equals_jax_and_only_refused_kernels_are_reported(jax_figures, project, path):
    truth = jax_figures[path.name]
    budgets = [k.shared_memory for k in kernel_models(project, project.model(str(path))) if k.shared_memory]
    assert len(budgets) == 1, budgets
    (budget,) = budgets
    assert budget.unknown == ()
    assert (budget.smem_bytes, budget.tmem_requested_cols) == (truth["resources"]["smem_bytes"],
                                                                truth["resources"]["tmem_cols"])
    reported = [f for f in analyze(project, str(path)) if f.code == "PAL012"]
    refused = not truth["ok"] and truth["message"].startswith(JAX_REFUSES)
    assert bool(reported) == refused, (truth["message"], reported)
    if refused:
        assert {f.span.line + 1 for f in reported} == {loc["line"] for loc in truth["locations"]}
        assert all(f.message.startswith(f'JAX: "{truth["message"]}"; ') for f in reported)


def test_the_finding_on_the_launch(project):
    fixture = FIXTURES / "agreement" / "bad_smem_scratch_over_budget.py"
    (finding,) = analyze(project, str(fixture))
    span = finding.span
    assert (finding.code, span.line + 1, span.column + 1, span.end_line + 1, span.end_column + 1) == ("PAL012", 18, 10, 18, 19)
    assert finding.message == (
        'JAX: "Mosaic GPU kernel exceeds available shared memory: smem_bytes=262176 > max_smem_bytes=232448"; '
        "use 29,728 B less. The kernel's scratch needs 262,176 bytes of shared memory (each buffer rounded up "
        "to a multiple of 1,024 bytes, 4 barriers included), and Hopper and Blackwell GPUs give a block 232,448 "
        "(`max_smem_bytes` in jax/experimental/mosaic/gpu/core.py:803). Use fewer pipeline stages "
        "(max_concurrent_steps), smaller blocks, or reuse one buffer through pl.run_scoped in sequence "
        "(sibling run_scoped share the space).")
    assert [r.message for r in finding.related] == ["kernel entry point (plgpu.kernel): plgpu.kernel lowers through Mosaic GPU"]


def test_a_shape_not_known_statically_gives_a_lower_bound(tmp_path):
    """A runtime shape counts as nothing: no alarm while the rest fits, a report once even the rest is over."""
    source = (FIXTURES / "agreement" / "bad_smem_scratch_over_budget.py").read_text()
    unknown = "plgpu.SMEM((int(input()),), jnp.float32), "
    fits = source.replace("plgpu.SMEM((65536,), jnp.float32), ", unknown)
    over = source.replace("plgpu.SMEM((65536,), jnp.float32), ", unknown + "plgpu.SMEM((65536,), jnp.float32), ")
    project = Project(root=str(tmp_path), python=jax_python())
    for name, text in (("fits.py", fits), ("over.py", over)):
        (tmp_path / name).write_text(text)
    (budget,) = [k.shared_memory for k in kernel_models(project, project.model(str(tmp_path / "fits.py")))]
    assert budget.summary() == "SMEM ≥ 32 / 232,448 B"
    assert budget.unknown == ("`plgpu.SMEM((int(input()),), jnp.float32)` (scratch_types[0]: shape or dtype not known statically)",)
    assert analyze(project, str(tmp_path / "fits.py")) == []
    (finding,) = analyze(project, str(tmp_path / "over.py"))
    assert finding.message.startswith('JAX: "Mosaic GPU kernel exceeds available shared memory: smem_bytes=... > '
                                      'max_smem_bytes=232448"; use 29,728+ B less. The kernel\'s scratch needs at least 262,176 bytes')
    assert finding.message.endswith("Not known statically: `plgpu.SMEM((int(input()),), jnp.float32)` "
                                    "(scratch_types[0]: shape or dtype not known statically).")


def test_the_limit_and_units_are_read_from_the_analysed_jax(tmp_path):
    """From the jax source files, never imported: a jax whose `_launch` defaults to another size moves the limit."""
    site = Path(jax_package_folder(Project(root=str(tmp_path), python=jax_python())))
    real = _read_limits(str(site), "stamp")
    assert (real.max_smem_bytes, real.smem_alignment, real.mbarrier_bytes, real.tmem_max_cols,
            real.reduction_scratch_bytes) == (232448, 1024, 8, 512, 2048)
    other = tmp_path / "jax"
    for part in ("experimental/mosaic/gpu/core.py", "experimental/mosaic/gpu/utils.py",
                 "experimental/mosaic/gpu/tcgen05.py", "_src/pallas/mosaic_gpu/core.py"):
        (other / part).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(site / part, other / part)
    core = other / "experimental/mosaic/gpu/core.py"
    core.write_text(core.read_text().replace('"shared_memory_per_block_optin", 227 * 1024)',
                                             '"shared_memory_per_block_optin", 99 * 1024)'))
    assert _read_limits(str(other), "stamp").max_smem_bytes == 99 * 1024
    core.write_text("")  # a jax that no longer says: nothing is checked against a limit
    assert _read_limits(str(other), "stamp again").max_smem_bytes is None


def test_hover_and_code_lens_show_the_estimate_over_lsp(tmp_path):
    """A real server over stdio: the lens above each launch and the hover on it carry `SMEM used / limit B`."""
    source = (FIXTURES / "smem_budget" / "decorator_threads_grid.py").read_text()
    path = tmp_path / "k.py"
    path.write_text(source)
    server = WireServer()
    try:
        answer = server.request(1, "initialize", {
            "processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {},
            "workspaceFolders": [{"uri": tmp_path.as_uri(), "name": "ws"}],
            "initializationOptions": {"python": jax_python(), "debounceMs": 0}})
        assert "result" in answer, answer
        server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        uri = path.as_uri()
        server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": source}}})
        lenses = server.request(2, "textDocument/codeLens", {"textDocument": {"uri": uri}})["result"]
        launch = source.splitlines().index("  return kernel(x)")
        budget = [(lens["range"]["start"]["line"], lens["command"]["title"]) for lens in lenses
                  if lens["command"]["command"] == ""]
        assert budget == [(launch, "SMEM 196,608 / 232,448 B")]
        hover = server.request(3, "textDocument/hover", {"textDocument": {"uri": uri},
                                                         "position": {"line": launch, "character": 11}})["result"]
        assert hover["contents"]["value"].splitlines()[0] == (
            "**SMEM 196,608 / 232,448 B** (Mosaic GPU shared memory, as JAX's resource estimator computes it)")
    finally:
        server.process.kill()


def test_jax_own_mosaic_gpu_kernels_get_no_alarm_and_no_figure_claimed_whole_where_a_helper_allocates():
    """jax's ops (ragged_dot_mgpu, the matmuls, attention) size their buffers from configs and allocate
    through plgpu.emit_pipeline: no finding, and the estimate says what it could not count."""
    ops = Path(jax_package_folder(Project(root=str(FIXTURES), python=jax_python()))) / "experimental/pallas/ops/gpu"
    project = Project(root=str(ops), python=jax_python())
    files = sorted(ops.glob("*_mgpu.py"))
    assert len(files) >= 10
    assert [f for path in files for f in analyze(project, str(path)) if f.code == "PAL012"] == []
    (ragged,) = [k.shared_memory for k in kernel_models(project, project.model(str(ops / "ragged_dot_mgpu.py")))
                 if k.shared_memory]
    assert ragged.summary() == "SMEM ≥ 0 / 232,448 B"
    assert "`plgpu.emit_pipeline` allocates its own buffers (not estimated)" in ragged.unknown
