"""A document's first pass (analysis/first_pass.py): the kernels of the modules importing it are not
modelled; the rules that needed them are left out of its findings, the others' findings are exactly the
whole analysis's, and the whole analysis afterwards finds what a fresh one finds."""

import asyncio
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import jax_python, publish_for
from pallas_lsp.analysis import Project
from pallas_lsp.analysis.first_pass import model_importer_kernels
from pallas_lsp.engine import analyze, analyze_before_importers, analyze_incremental

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)
"""
# `body` signals a semaphore array whole, `barrier` asks get_global for a barrier: reported (PAL005,
# PAL001) only through the kernels launcher.py launches with them (PAL001's search is kept in a memo).
# `copy`, launched here, asks for more shared memory than a block has (PAL012): no importer needed.
HELPERS = HEADER + """

def body(x_ref, o_ref, sems):
    pl.semaphore_signal(sems)


def barrier(x_ref, o_ref):
    s = pl.get_global(plgpu.SemaphoreType.BARRIER)


def own(x_ref, o_ref, buf, bars):
    o_ref[...] = x_ref[...]


copy = plgpu.kernel(own, out_type=X,
                    scratch_types=[plgpu.SMEM((65536,), jnp.float32), plgpu.Barrier(num_arrivals=1, num_barriers=4)])
"""
LAUNCHER = HEADER + """
import helpers


def run(x):
    return plgpu.kernel(helpers.body, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR((2,))])(x)


def wait(x):
    return plgpu.kernel(helpers.barrier, out_type=X)(x)
"""
ALONE = HEADER + """

def alone(x_ref, o_ref, sems):
    pl.semaphore_wait(sems)


def run(x):
    return plgpu.kernel(alone, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR((3,))])(x)
"""
FILES = {"helpers.py": HELPERS, "launcher.py": LAUNCHER, "alone.py": ALONE}


@pytest.fixture
def workspace(tmp_path):
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def _keys(findings):
    return [(f.code, f.span, f.message) for f in findings]


def _whole(workspace, name):
    return _keys(analyze(Project(str(workspace), python=jax_python()), str(workspace / name)))


@pytest.mark.parametrize("steps", [False, True])
@pytest.mark.parametrize("name", sorted(FILES))
def test_the_first_pass_finds_a_part_of_the_whole_and_the_analysis_after_it_the_whole(workspace, name, steps):
    """With `steps`, the importers' kernels are modelled between the two, as the server does."""
    project = Project(str(workspace), python=jax_python())
    path, text = str(workspace / name), FILES[name]
    project.set_text(path, text)
    first, left_out = analyze_before_importers(project, path, text)
    whole = _whole(workspace, name)
    assert set(_keys(first)) <= set(whole)
    if not left_out:
        assert _keys(first) == whole
    for importer, own_module_only in left_out if steps else ():
        model_importer_kernels(project, path, importer, own_module_only)
    assert _keys(analyze_incremental(project, path, text)) == whole


def test_the_rules_needing_the_importers_kernels_wait_for_the_whole_analysis(workspace):
    project = Project(str(workspace), python=jax_python())
    path = str(workspace / "helpers.py")
    project.set_text(path, HELPERS)
    first, left_out = analyze_before_importers(project, path, HELPERS)
    # PAL001 asked for the launcher's kernels as they are (`models_reaching`), PAL005 with own-module call sites
    launcher = str(workspace / "launcher.py")
    assert [f.code for f in first] == ["PAL012"] and set(left_out) == {(launcher, False), (launcher, True)}
    assert "launcher.py" not in {p.rsplit("/", 1)[-1] for p in project._models}
    for step in left_out:
        model_importer_kernels(project, path, *step)
    assert "launcher.py" in {p.rsplit("/", 1)[-1] for p in project._models}
    assert [f.code for f in analyze_incremental(project, path, HELPERS)] == ["PAL005", "PAL001", "PAL012"]


def test_a_module_no_other_imports_is_whole_at_once(workspace):
    project = Project(str(workspace), python=jax_python())
    path = str(workspace / "alone.py")
    project.set_text(path, ALONE)
    first, left_out = analyze_before_importers(project, path, ALONE)
    assert left_out == [] and [f.code for f in first] == ["PAL005"]


# ---- through the real server ---------------------------------------------------------------------


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "pallas_lsp", "serve"]))
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


async def _open(client, workspace, name: str, version: int = 1) -> str:
    await client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=workspace.as_uri(),
        initialization_options={"python": jax_python(), "debounceMs": 0}))
    uri = (workspace / name).as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="python", version=version, text=FILES[name])))
    return uri


@pytest.mark.asyncio(loop_scope="function")
async def test_the_server_publishes_the_first_pass_then_what_the_importers_add(client: LanguageClient, workspace):
    uri = await _open(client, workspace, "helpers.py")
    first = await publish_for(client, uri, 1)
    assert [d.code for d in first.diagnostics] == ["PAL012"]
    whole = await publish_for(client, uri, 1)
    assert [d.code for d in whole.diagnostics] == ["PAL005", "PAL001", "PAL012"]
    assert whole.diagnostics[2] == first.diagnostics[0]
    # a hover after it is answered by the models the analyses left
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=16, character=24)))
    assert hover is not None and "buf: Ref<smem>{float32[65536]}" in hover.contents.value


@pytest.mark.asyncio(loop_scope="function")
async def test_an_edit_before_the_whole_analysis_publishes_no_older_version(client: LanguageClient, workspace):
    uri = await _open(client, workspace, "helpers.py")
    edited = FILES["helpers.py"].replace("    o_ref[...] = x_ref[...]\n", "    o_ref[...] = x_ref[...] + 1\n")
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)]))
    codes = []
    while codes != ["PAL005", "PAL001", "PAL012"]:  # a first pass's (of version 1 or 2) may come first
        codes = [d.code for d in (await publish_for(client, uri, 2)).diagnostics]
        assert codes in (["PAL012"], ["PAL005", "PAL001", "PAL012"])
    # answered on the analysis thread after every analysis queued before it
    await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=16, character=24)))
    versions = [p.version for p in client.pallas_published if p.uri == uri]
    assert versions == sorted(versions) and versions[-1] == 2


@pytest.mark.asyncio(loop_scope="function")
async def test_a_pull_client_is_asked_to_pull_again_when_the_whole_analysis_adds(client: LanguageClient, workspace):
    await client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(
            text_document=types.TextDocumentClientCapabilities(
                diagnostic=types.DiagnosticClientCapabilities(dynamic_registration=False)),
            workspace=types.WorkspaceClientCapabilities(
                diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True))),
        root_uri=workspace.as_uri(), initialization_options={"python": jax_python()}))
    uri = (workspace / "helpers.py").as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=FILES["helpers.py"])))
    refreshes = client.diagnostic_refresh_count

    async def pulled():
        return [d.code for d in (await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri)))).items]

    assert await asyncio.wait_for(pulled(), 60) == ["PAL012"]

    async def refreshed():
        while client.diagnostic_refresh_count == refreshes:
            await asyncio.sleep(0.05)

    await asyncio.wait_for(refreshed(), 60)
    assert await asyncio.wait_for(pulled(), 60) == ["PAL005", "PAL001", "PAL012"]
