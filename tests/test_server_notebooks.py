"""The language server with Jupyter notebooks (issue 23): LSP 3.17 notebook document sync over real
stdio (pytest-lsp), real jedi against `.venvs/jax`. Cells are analysed as one module; each cell's
diagnostics are published (or pulled) under its own URI, at positions in the cell."""

import asyncio
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import REPO, code_actions_json, jax_python, publish_for
from test_notebooks import MESSAGE  # the notebook launches its get_global with plgpu.kernel

NOTEBOOK_URI = (REPO / "tests" / "notebooks" / "lsp_notebook.ipynb").as_uri()
CELLS = [
    (types.NotebookCellKind.Markup, "markdown", "# A kernel with a global tile"),
    (types.NotebookCellKind.Code, "python", "%matplotlib inline\nimport jax\nimport jax.numpy as jnp\n"
                                            "from jax.experimental import pallas as pl\n"
                                            "from jax.experimental.pallas import mosaic_gpu as plgpu"),
    (types.NotebookCellKind.Code, "python", "TILE = plgpu.SMEM((128,), jnp.float32)\nX = jax.ShapeDtypeStruct((128,), jnp.float32)"),
    (types.NotebookCellKind.Code, "python", "def body(x_ref, o_ref):\n  tile = pl.get_global(TILE)\n  o_ref[...] = x_ref[...] + tile[...]"),
    (types.NotebookCellKind.Code, "python", "kernel = plgpu.kernel(body, out_type=X)"),
]
CELL_URIS = [f"vscode-notebook-cell:{NOTEBOOK_URI[len('file://'):]}#W{i}sZmlsZQ%3D%3D" for i in range(len(CELLS))]
CAPABILITIES = dict(notebook_document=types.NotebookDocumentClientCapabilities(
    synchronization=types.NotebookDocumentSyncClientCapabilities()))


def start(capabilities: types.ClientCapabilities):
    @pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "pallas_lsp", "serve"]))
    async def client(lsp_client: LanguageClient):
        lsp_client.pallas_initialized = await lsp_client.initialize_session(types.InitializeParams(
            capabilities=capabilities, root_uri=(REPO / "tests" / "notebooks").as_uri(),
            initialization_options={"python": jax_python(), "debounceMs": 20, "inlayHints": True}))
        yield
        await lsp_client.shutdown_session()
    return client


client = start(types.ClientCapabilities(**CAPABILITIES))
resolve_client = start(types.ClientCapabilities(**CAPABILITIES, text_document=types.TextDocumentClientCapabilities(
    code_action=types.CodeActionClientCapabilities(resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"])))))
pull_client = start(types.ClientCapabilities(
    **CAPABILITIES,
    text_document=types.TextDocumentClientCapabilities(diagnostic=types.DiagnosticClientCapabilities()),
    workspace=types.WorkspaceClientCapabilities(diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True))))


def open_notebook(client: LanguageClient) -> None:
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(
            uri=NOTEBOOK_URI, notebook_type="jupyter-notebook", version=1,
            cells=[types.NotebookCell(kind=kind, document=uri) for (kind, _, _), uri in zip(CELLS, CELL_URIS)]),
        cell_text_documents=[types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)
                             for (_, language, text), uri in zip(CELLS, CELL_URIS)]))


def edit_cell(client: LanguageClient, index: int, text: str, version: int) -> None:
    """The cell's whole text replaced, as VS Code sends an edit of one cell."""
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(uri=NOTEBOOK_URI, version=version),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
            types.NotebookDocumentCellContentChanges(
                document=types.VersionedTextDocumentIdentifier(uri=CELL_URIS[index], version=version),
                changes=[types.TextDocumentContentChangeWholeDocument(text=text)])]))))


def client_close(client: LanguageClient) -> None:
    client.notebook_document_did_close(types.DidCloseNotebookDocumentParams(
        notebook_document=types.NotebookDocumentIdentifier(uri=NOTEBOOK_URI),
        cell_text_documents=[types.TextDocumentIdentifier(uri=uri) for uri in CELL_URIS]))


async def cell_diagnostics(client: LanguageClient) -> dict[int, list]:
    """One publish per code cell, in cell order: {cell index: [(code, range, message)]}."""
    found = {}
    for index in (1, 2, 3, 4):
        params = await publish_for(client, CELL_URIS[index], timeout=60)
        found[index] = [(d.code, (d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character),
                         d.message) for d in params.diagnostics]
    return found


FINDING = ("PAL001", (1, 9, 1, 28), MESSAGE)  # `pl.get_global(TILE)`, on the cell's second line
FIX_IN_CELLS = sorted([
    (CELL_URIS[1], 1, [(3, 0, 4, 0, "")]),  # the `pl` import, unused now
    (CELL_URIS[3], 1, [(0, 21, 2, 32, ", tile_ref):\n  o_ref[...] = x_ref[...] + tile_ref")]),
    (CELL_URIS[4], 1, [(0, 38, 0, 38, ", scratch_types=[TILE]")]),
])


def cell_changes(edit: dict) -> list:
    return sorted((change["textDocument"]["uri"], change["textDocument"]["version"], [
        (e["range"]["start"]["line"], e["range"]["start"]["character"], e["range"]["end"]["line"],
         e["range"]["end"]["character"], e["newText"]) for e in change["edits"]]) for change in edit["documentChanges"])


@pytest.mark.asyncio(loop_scope="function")
async def test_cells_are_one_module_and_an_edit_in_one_rechecks_the_next(client: LanguageClient):
    sync = client.pallas_initialized.capabilities.notebook_document_sync
    assert (sync.notebook_selector[0].notebook, [c.language for c in sync.notebook_selector[0].cells]) == (
        "jupyter-notebook", ["python", "markdown"])
    open_notebook(client)
    # `pl`, `plgpu` and TILE come from the cells above the kernel's.
    assert await cell_diagnostics(client) == {1: [], 2: [], 3: [FINDING], 4: []}
    edit_cell(client, 2, CELLS[2][2].replace("plgpu.SMEM((128,), jnp.float32)", "plgpu.SemaphoreType.REGULAR"), 2)
    assert await cell_diagnostics(client) == {1: [], 2: [], 3: [], 4: []}  # cell 3's type cleared cell 4's finding
    edit_cell(client, 2, CELLS[2][2], 3)
    assert await cell_diagnostics(client) == {1: [], 2: [], 3: [FINDING], 4: []}
    client_close(client)
    assert await cell_diagnostics(client) == {1: [], 2: [], 3: [], 4: []}


@pytest.mark.asyncio(loop_scope="function")
async def test_hover_and_inlay_hints_inside_a_cell(client: LanguageClient):
    open_notebook(client)
    await cell_diagnostics(client)
    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=CELL_URIS[3]), position=types.Position(line=1, character=12))), 60)
    assert hover.contents.value == ("**pl.get_global** of `TILE`\n\nInferred: `Ref<smem>{float32[128]}`: not a Mosaic "
                                    "GPU REGULAR semaphore: JAX rejects it (PAL001)\n\n"
                                    "This call is reported: PAL001 get-global-not-semaphore (error).")
    hints = await asyncio.wait_for(client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=types.TextDocumentIdentifier(uri=CELL_URIS[3]),
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=3, character=0)))), 60)
    assert [(h.position.line, h.position.character, h.label) for h in hints] == [
        (0, 14, ": gmem"), (0, 21, ": f32[128] gmem")]  # an operand of the call (not made here), the output


async def preferred_fix_in_cell(client: LanguageClient) -> dict:
    """The preferred quick fix of cell 4's finding, as the server sent it (JSON)."""
    open_notebook(client)
    diagnostics = (await publish_for(client, CELL_URIS[3], timeout=60)).diagnostics
    actions = await code_actions_json(client, types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=CELL_URIS[3]),
        range=diagnostics[0].range, context=types.CodeActionContext(diagnostics=list(diagnostics))))
    return next(a for a in actions if a.get("isPreferred"))


@pytest.mark.asyncio(loop_scope="function")
async def test_quick_fix_and_fix_all_edit_the_cells(client: LanguageClient):
    fix = await preferred_fix_in_cell(client)
    assert fix["title"] == "pallas-lsp (PAL001): Allocate tile as scratch (scratch_types)"
    assert cell_changes(fix["edit"]) == FIX_IN_CELLS
    fix_all = await code_actions_json(client, types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=CELL_URIS[4]), range=types.Range(
            start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
        context=types.CodeActionContext(diagnostics=[], only=["source.fixAll.pallas"])))
    # The title a file's fix-all has, in the source-action menu as in the quick-fix one.
    assert [(a["kind"], a["title"]) for a in fix_all] == [("source.fixAll.pallas", "Fix all pallas-lsp problems")]
    assert {change["textDocument"]["uri"] for change in fix_all[0]["edit"]["documentChanges"]} == {
        CELL_URIS[1], CELL_URIS[3], CELL_URIS[4]}


async def refreshed(client: LanguageClient, count: int) -> None:
    """Until the server has asked the client to pull again more than `count` times."""
    async def wait():
        while client.diagnostic_refresh_count <= count:
            await asyncio.sleep(0.01)
    await asyncio.wait_for(wait(), 60)


@pytest.mark.asyncio(loop_scope="function")
async def test_a_pull_client_gets_cells_pushed_until_it_pulls_one_then_by_pull_only(pull_client: LanguageClient):
    """VS Code's client pulls for text documents only, never for notebook cells: cells are pushed to
    it. A client that pulls a cell gets them by pull only (pushed ones cleared: it would show both)."""
    open_notebook(pull_client)
    assert await cell_diagnostics(pull_client) == {1: [], 2: [], 3: [FINDING], 4: []}
    edit_cell(pull_client, 2, CELLS[2][2].replace("plgpu.SMEM((128,), jnp.float32)", "plgpu.SemaphoreType.REGULAR"), 2)
    assert await cell_diagnostics(pull_client) == {1: [], 2: [], 3: [], 4: []}
    edit_cell(pull_client, 2, CELLS[2][2], 3)
    assert await cell_diagnostics(pull_client) == {1: [], 2: [], 3: [FINDING], 4: []}

    async def pulled(index: int):
        report = await asyncio.wait_for(pull_client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=CELL_URIS[index]))), 60)
        return [(d.code, (d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character),
                 d.message) for d in report.items]

    assert await pulled(3) == [FINDING]
    cleared = await publish_for(pull_client, CELL_URIS[3], timeout=60)  # the one cell pushed a finding
    assert (cleared.uri, list(cleared.diagnostics)) == (CELL_URIS[3], [])
    assert [await pulled(index) for index in (1, 2, 4)] == [[], [], []]
    published = len(pull_client.pallas_published)
    refreshes = pull_client.diagnostic_refresh_count
    edit_cell(pull_client, 2, CELLS[2][2].replace("plgpu.SMEM((128,), jnp.float32)", "plgpu.SemaphoreType.REGULAR"), 4)
    await refreshed(pull_client, refreshes)  # sent where the cells were pushed before: after the analysis
    assert pull_client.pallas_published[published:] == []
    assert await pulled(3) == []
    client_close(pull_client)
    assert await pulled(3) == []  # answered after the close was handled: nothing pushed to clear there
    assert pull_client.pallas_published[published:] == []


@pytest.mark.asyncio(loop_scope="function")
async def test_a_notebook_sent_as_one_python_document_is_python(client: LanguageClient):
    """jupyterlab-lsp sends a notebook as one text document, its cells joined, under the notebook's
    own name (`.virtual_documents/nb.ipynb`): its text is Python, fixed as Python."""
    uri = (REPO / "tests" / "notebooks" / ".virtual_documents" / "lsp_virtual.ipynb").as_uri()
    text = "\n".join(source for kind, _, source in CELLS if kind == types.NotebookCellKind.Code).replace("%matplotlib inline", "")
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    (diagnostic,) = (await publish_for(client, uri, 1, timeout=60)).diagnostics
    assert (diagnostic.code, diagnostic.range.start.line, diagnostic.range.start.character) == ("PAL001", 8, 9)
    actions = await code_actions_json(client, types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic])))
    fix = next(a for a in actions if a.get("isPreferred"))
    assert fix["title"] == "pallas-lsp (PAL001): Allocate tile as scratch (scratch_types)"
    assert {change["textDocument"]["uri"] for change in fix["edit"]["documentChanges"]} == {uri}


@pytest.mark.asyncio(loop_scope="function")
async def test_a_quick_fix_resolved_in_a_cell_edits_the_cells(resolve_client: LanguageClient):
    fix = await preferred_fix_in_cell(resolve_client)
    assert "edit" not in fix
    resolved = await asyncio.wait_for(resolve_client.code_action_resolve_async(
        resolve_client.protocol._converter.structure(fix, types.CodeAction)), 60)
    assert cell_changes(resolve_client.protocol._converter.unstructure(resolved.edit)) == FIX_IN_CELLS
